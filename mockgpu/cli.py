"""The `mockgpu` command."""
def main(argv=None): raise NotImplementedError("mockgpu CLI: being written")
