// Source: llvm/llvm-project, mlir/test/Dialect/Linalg/transform-pack-greedily.mlir (commit
// 13f71d57ae1660a45207b0e3bc26adc98dc1489f, Apache-2.0 WITH LLVM-exception),
// the spec of its second case (@matmul_mk_nk_nm), verbatim: packs every contraction-like
// linalg.generic greedily.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module_op: !transform.any_op {transform.readonly}) {
    %generic = transform.structured.match ops{["linalg.generic"]} in %module_op : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.structured.pack_greedily %generic
        matmul_packed_sizes = [8, 16, 32] matmul_inner_dims_order = [1, 2, 0]
      : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.generic">
      transform.yield
  }
}
