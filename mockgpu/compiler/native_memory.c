/* Checked global memory and the stops of a dispatch, shared by the native translations. The including prelude
 * defines Ctx with the fields maps, nmaps, hint, status, fault_pc, fault_size, fault_write, fault_kind, fault_va,
 * and GLOBAL_SPACE. */

/* *** stopping the dispatch *** */

static void fault(Ctx *c, uint64_t va, int64_t n, int write, int64_t pc, int64_t kind) {
  c->status = FAULT; c->fault_va = va; c->fault_size = n; c->fault_write = write; c->fault_pc = pc; c->fault_kind = kind;
  longjmp(stop, 1);
}
static int64_t over_budget(Ctx *c, int64_t pc) { c->status = BUDGET; c->fault_pc = pc; longjmp(stop, 1); return -1; }
static int64_t unsupported(Ctx *c, int64_t pc, int64_t msg) {
  c->status = UNSUPPORTED; c->fault_pc = pc; c->fault_size = msg; longjmp(stop, 1); return -1;
}

/* *** checked global memory: an element outside every mapping is a fault; the first faulting element in lane order,
 * then element order, is the one reported, as in the numpy paths *** */

static const Map *search(Ctx *c, uint64_t va) {
  int64_t lo = 0, hi = c->nmaps;
  while (lo < hi) { int64_t mid = (lo + hi) / 2; if (c->maps[mid].va <= va) lo = mid + 1; else hi = mid; }
  if (lo == 0 || va - c->maps[lo - 1].va >= c->maps[lo - 1].size) return 0;
  c->hint = lo - 1;
  return c->maps + lo - 1;
}
/* the mapping holding va; the last one hit first (an empty table holds one mapping of size 0) */
static inline const Map *find(Ctx *c, uint64_t va) {
  const Map *m = c->maps + c->hint;
  return va - m->va < m->size ? m : search(c, va);
}
static uint8_t *gptr(Ctx *c, uint64_t va, int64_t n, int write, int64_t pc) {
  const Map *m = find(c, va);
  if (!m || (uint64_t)n > m->size - (va - m->va)) fault(c, va, n, write, pc, GLOBAL_SPACE);
  return (uint8_t *)(uintptr_t)(m->host + (va - m->va));
}
/* an access of count elements (a b128 store, a .v4 load) that misses is reported whole: its first address and all its
 * bytes, as the numpy paths report the lane's access */
static inline void gcheck(Ctx *c, uint64_t va, int64_t esize, int64_t count, int write, int64_t pc) {
  const Map *m = find(c, va);
  if (m && (uint64_t)(esize * count) <= m->size - (va - m->va)) return;
  for (int64_t i = 0; i < count; i++) {
    const Map *e = find(c, va + i * esize);
    if (!e || (uint64_t)esize > e->size - (va + i * esize - e->va)) fault(c, va, esize * count, write, pc, GLOBAL_SPACE);
  }
}
/* an access that straddles mappings (or misses): element by element, out of line so that gload's hit stays small
 * enough to inline at every load */
__attribute__((noinline)) static void gload_split(Ctx *c, void *dst, uint64_t va, int64_t esize, int64_t count, int64_t pc) {
  gcheck(c, va, esize, count, 0, pc);
  for (int64_t i = 0; i < count; i++) memcpy((uint8_t *)dst + i * esize, gptr(c, va + i * esize, esize, 0, pc), esize);
}
static inline void gload(Ctx *c, void *dst, uint64_t va, int64_t esize, int64_t count, int64_t pc) {
  const Map *m = find(c, va);
  if (__builtin_expect(m && (uint64_t)(esize * count) <= m->size - (va - m->va), 1)) {
    memcpy(dst, (const void *)(uintptr_t)(m->host + (va - m->va)), esize * count);
    return;
  }
  gload_split(c, dst, va, esize, count, pc);
}
__attribute__((noinline)) static void gstore_split(Ctx *c, uint64_t va, const void *src, int64_t esize, int64_t count) {
  for (int64_t i = 0; i < count; i++) memcpy(gptr(c, va + i * esize, esize, 1, 0), (const uint8_t *)src + i * esize, esize);
}
static inline void gstore(Ctx *c, uint64_t va, const void *src, int64_t esize, int64_t count) {
  const Map *m = find(c, va);
  if (__builtin_expect(m && (uint64_t)(esize * count) <= m->size - (va - m->va), 1)) {
    memcpy((void *)(uintptr_t)(m->host + (va - m->va)), src, esize * count);
    return;
  }
  gstore_split(c, va, src, esize, count);
}
