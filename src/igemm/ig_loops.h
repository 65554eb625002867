/* The band's short-row loops (ig_band.inc) stay loops: GCC would otherwise
 * turn them back into memset/memcpy calls.  Included by the files that
 * instantiate the implicit GEMM's driver templates, right before them: the
 * pragma applies to every function defined after it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-loop-distribute-patterns")
#endif
