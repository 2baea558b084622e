"""A scan of a reference stepper's source for per-op code (an op's meaning written in the stepper instead of rendered
from the rows and the numpy backend's emitters). Findings, each naming the line:
- an import of a module that holds ops' meaning (the rows, the runtime helpers the rendered code calls): a handler
  calling those helpers itself would be the op's meaning written a second time, beside the emitter that calls them;
- a name that is an op (an op class the translator dispatches on, an opcode string) or a def named as one of the
  translator's emitters: a dispatch on ops, or a handler;
- arithmetic or bit operators, or numeric literals other than 0 and 1, in a function outside `arithmetic` (the
  functions allowed them, each for a reason that is no op's: state views, scheduling)."""
from __future__ import annotations
import ast

def findings(source:str, modules:set[str], names:set[str], opcodes:set[str], arithmetic:set[str]) -> list[str]:
  tree, out = ast.parse(source), []
  for node in ast.walk(tree):
    if isinstance(node, ast.ImportFrom):
      mods = {node.module or ""} | {f"{node.module}.{a.name}" for a in node.names}
      if hit := sorted(m for m in mods if m in modules): out.append(f"line {node.lineno}: imports {hit[0]}")
    elif isinstance(node, ast.Import) and (hit := sorted(a.name for a in node.names if a.name in modules)):
      out.append(f"line {node.lineno}: imports {hit[0]}")
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
      node.name if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else None
    if name in names: out.append(f"line {node.lineno}: names the op {name}")
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in opcodes:
      out.append(f"line {node.lineno}: spells the opcode {node.value!r}")
  for qual, fn in _functions(tree):
    if qual in arithmetic: continue
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):
      if _arithmetic(node): out.append(f"line {node.lineno}: arithmetic in {qual}")
  return out

def _functions(tree:ast.Module):
  """(Class.method or function name, its def) for every def of the module, methods of nested classes included."""
  def visit(node, prefix:str):
    for child in ast.iter_child_nodes(node):
      if isinstance(child, ast.ClassDef): yield from visit(child, f"{prefix}{child.name}.")
      elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield f"{prefix}{child.name}", child
        yield from visit(child, f"{prefix}{child.name}.")
  yield from visit(tree, "")

def _arithmetic(node:ast.AST) -> bool:
  if isinstance(node, (ast.BinOp, ast.AugAssign)): return True
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.USub)): return True
  return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex) and node.value not in (0, 1)
