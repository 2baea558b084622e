"""placeholder, being written"""
def install(system): pass
