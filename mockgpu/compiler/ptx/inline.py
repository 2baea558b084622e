"""PTX device functions (.func) and `call`: every call is expanded in place in the entry that makes it, so both
backends (the numpy path and the C path) see one flat kernel.

What the PTX ISA defines, and how the expansion keeps it:
  - a call is per thread: each thread that executes it (its guard true) runs the callee's body and comes back to the
    instruction after the call. Expanded, the body is code of the kernel like any other; threads that diverge in it
    reconverge as in any code (min-PC scheduling on the numpy path, one thread at a time on the C path), and a guarded
    call branches around the expansion for the threads whose guard is false.
  - `ret` in a .func returns to the caller: it becomes a branch to the end of the expansion. `exit` still ends the thread.
  - arguments and return values pass through the .param space: the caller declares .param variables in its call
    sequence (`.param .b64 param0; st.param.b64 [param0], %rd1; call.uni (retval0), f, (param0);
    ld.param.b64 %rd2, [retval0];`) and the callee reads its formal parameters with ld.param and writes its return
    parameters with st.param. Those are per-thread values, so here they are per-thread .local variables: the caller's
    call-sequence variables become .local variables, and in the callee's body a formal (or return) parameter names the
    caller's actual argument (return variable) — ld.param/st.param of them become ld.local/st.local. Register or
    constant arguments (the older form of call) are stored to a fresh .local variable before the call; register return
    values are loaded from one after it.
  - the callee's registers, labels and .local variables are renamed per expansion, so two calls (or two calls of the
    same function) never share state; .shared variables of a .func are one per CTA (kept by name).
What stays a gap of the mock (UnsupportedInstruction when the kernel is translated, naming the call): recursion (the
hardware has a call stack; the expansion would not end), indirect calls (call through a register, with a
.callprototype), and calls of functions without a body in the module (.extern, e.g. vprintf). A call whose argument
or return count differs from the callee's declaration is invalid PTX (InvalidPTX), as ptxas rejects it.
"""
from __future__ import annotations
from dataclasses import replace
from mockgpu.errors import UnsupportedInstruction
from mockgpu.compiler.ptx import syntax as P

def inline_calls(m:P.Module):
  for fn in [f for f in m.functions.values() if f.entry and f.defined]: _Inliner(m, fn).run()

class _Names:
  """The renaming of one function body into the entry: registers, symbols (labels, variables, parameters)."""
  def __init__(self, inl:_Inliner, suffix:str|None, syms:dict[str, str], param_local:set[str], ret_label:str|None):
    self.inl, self.suffix, self.syms, self.param_local, self.ret_label = inl, suffix, syms, param_local, ret_label
    self.regs:dict[str, P.Reg] = {}

  def reg(self, r:P.Reg) -> P.Reg:
    if self.suffix is None: return r
    if (n := self.regs.get(r.name)) is None:
      name = f"{r.name}_{self.suffix}"
      while name in self.inl.fn.regs: name += "_"
      n = self.regs[r.name] = self.inl.fn.regs[name] = P.Reg(name, r.type, r.ptx)
    return n

  def sym(self, name:str) -> str: return self.syms.get(name, name)

  def arg(self, a):
    if isinstance(a, P.Reg): return self.reg(a)
    if isinstance(a, P.Sym): return P.Sym(self.sym(a.name), a.offset)
    if isinstance(a, P.Addr): return P.Addr(self.arg(a.base) if a.base is not None else None, a.offset)
    if isinstance(a, P.Vec): return P.Vec(tuple(self.arg(x) for x in a.items))
    if isinstance(a, P.Not): return P.Not(self.reg(a.reg))
    if isinstance(a, P.PredPair): return P.PredPair(self.reg(a.p), self.reg(a.q) if a.q is not None else None)
    if isinstance(a, P.Call):
      return P.Call(self.reg(a.target) if isinstance(a.target, P.Reg) else a.target, tuple(self.arg(x) for x in a.rets),
                    tuple(self.arg(x) for x in a.params), a.prototype)
    return a

  def instr(self, ins:P.Instr) -> P.Instr:
    mods = ins.mods
    if ins.op in ("ld", "st") and "param" in mods:
      a = ins.args[1 if ins.op == "ld" else 0] if len(ins.args) == 2 else None
      if isinstance(a, P.Addr) and isinstance(a.base, P.Sym) and a.base.name in self.param_local:
        mods = tuple("local" if x == "param" else x for x in mods)
    guard = (self.reg(ins.guard[0]), ins.guard[1]) if ins.guard is not None else None
    return replace(ins, mods=mods, args=[self.arg(a) for a in ins.args], guard=guard)

class _Inliner:
  def __init__(self, m:P.Module, fn:P.Function):
    self.funcs, self.fn, self.count = m.functions, fn, 0
    self.var_names = {v.name for v in fn.vars}

  def run(self):
    fn = self.fn
    own = {v.name for v in fn.vars if v.space == "param"}
    fn.vars = [replace(v, space="local") if v.space == "param" else v for v in fn.vars]
    if not own and not any(isinstance(s, P.Instr) and s.op == "call" for s in fn.body): return
    fn.body = self.walk(fn.body, _Names(self, None, {}, own, None), (fn.name,))

  def fresh(self, base:str) -> str:
    name = base
    while name in self.var_names: name += "_"
    self.var_names.add(name)
    return name

  def walk(self, body:list, names:_Names, stack:tuple) -> list:
    out = []
    for st in body:
      if isinstance(st, P.Label):
        out.append(P.Label(names.sym(st.name), st.line))
        continue
      ins = names.instr(st)
      if ins.op == "ret" and names.ret_label is not None:
        out.append(replace(ins, op="bra", mods=tuple(x for x in ins.mods if x == "uni"), args=[P.Sym(names.ret_label)]))
      elif ins.op == "call" and ins.error is None: self.call(ins, stack, out)
      else: out.append(ins)
    return out

  def call(self, ins:P.Instr, stack:tuple, out:list):
    c:P.Call = ins.args[0]
    unsupported = lambda why: out.append(replace(ins, error=f"PTX line {ins.line}: {why} not supported: {ins.text}",
                                                 error_type=UnsupportedInstruction))
    if isinstance(c.target, P.Reg) or c.prototype is not None: return unsupported("an indirect call (through a register) is")
    callee = self.funcs.get(c.target)
    if callee is None or callee.entry:
      return out.append(replace(ins, error=f"PTX line {ins.line}: call of {c.target}, which is not a .func of this module "
                                          f"(ptxas rejects it: call takes a declared .func): {ins.text}", error_type=P.InvalidPTX))
    if len(c.params) != len(callee.params) or len(c.rets) != len(callee.rets):
      return out.append(replace(ins, error=f"PTX line {ins.line}: call of {c.target} with {len(c.rets)} return and {len(c.params)} "
                                          f"argument operands, which is declared with {len(callee.rets)} and {len(callee.params)} "
                                          f"(ptxas rejects it): {ins.text}", error_type=P.InvalidPTX))
    if not callee.defined: return unsupported(f"a call of {c.target}, which has no body in this module (.extern),")
    if c.target in stack: return unsupported(f"recursion ({' -> '.join(stack[1:] + (c.target,))}) is")
    self.count += 1
    k = self.count
    suffix = f"c{k}"
    syms:dict[str, str] = {}
    after = []
    pre = []
    for formal, actual in [(p, a) for p, a in zip(callee.params, c.params)] + [(p, a) for p, a in zip(callee.rets, c.rets)]:
      is_ret = formal in callee.rets
      if isinstance(actual, P.Sym) and actual.offset == 0 and actual.name in {v.name for v in self.fn.vars if v.space == "local"}:
        syms[formal.name] = actual.name
        continue
      if not isinstance(actual, (P.Reg, P.Imm)) or (is_ret and not isinstance(actual, P.Reg)) or formal.size not in (1, 2, 4, 8):
        return out.append(replace(ins, error=f"PTX line {ins.line}: call operand {actual!r} for {formal.name} of {c.target} is not "
                                            f"a .param variable of the call sequence or a register (ptxas rejects it): {ins.text}",
                                      error_type=P.InvalidPTX))
      var = self.fresh(f"{formal.name}${suffix}")
      self.fn.vars.append(P.Var(var, "local", formal.type, formal.size, formal.align))
      syms[formal.name] = var
      t = formal.type if formal.type != "b8" or formal.size == 1 else {2: "b16", 4: "b32", 8: "b64"}[formal.size]
      addr = P.Addr(P.Sym(var), 0)
      if is_ret: after.append(P.Instr("ld", ("local", t), [actual, addr], None, ins.line, ins.text))
      else: pre.append(P.Instr("st", ("local", t), [addr, actual], None, ins.line, ins.text))
    for v in callee.vars:
      if v.space in ("local", "param"):
        syms[v.name] = name = self.fresh(f"{v.name}${suffix}")
        self.fn.vars.append(replace(v, name=name, space="local"))
      elif v.name not in self.var_names:  # .shared (one per CTA) and anything else: kept by name
        self.var_names.add(v.name)
        self.fn.vars.append(v)
    for st in callee.body:
      if isinstance(st, P.Label): syms[st.name] = self.fresh(f"{st.name}${suffix}")
    ret_label = self.fresh(f"$ret${suffix}")
    param_local = {p.name for p in callee.params} | {p.name for p in callee.rets} | {v.name for v in callee.vars if v.space == "param"}
    names = _Names(self, suffix, syms, param_local, ret_label)
    skip = None
    if ins.guard is not None:
      # a guarded call: the threads whose guard is false branch around it
      skip = self.fresh(f"$skip${suffix}")
      p, neg = ins.guard
      out.append(P.Instr("bra", (), [P.Sym(skip)], (p, not neg), ins.line, ins.text))
    out.extend(pre)
    out.extend(self.walk(callee.body, names, stack + (c.target,)))
    out.append(P.Label(ret_label, ins.line))
    out.extend(after)
    if skip is not None: out.append(P.Label(skip, ins.line))
