// Source: llvm/llvm-project, mlir/test/Dialect/Linalg/transform-pack-greedily.mlir (commit
// 13f71d57ae1660a45207b0e3bc26adc98dc1489f, Apache-2.0 WITH LLVM-exception),
// the spec of its "k padded" case, verbatim: packs m and k, pads n to the next multiple of 10.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module_op: !transform.any_op {transform.readonly}) {
    %generic = transform.structured.match ops{["linalg.generic"]} in %module_op : (!transform.any_op) -> !transform.op<"linalg.generic">
    transform.structured.pack_greedily %generic
        // In this spec, the "k" dimension is not packed but rather padded to the
        // next multiple of 10 (i.e. 130).
        matmul_packed_sizes = [8, 0, 32]
        matmul_padded_sizes_next_multiple_of = [0, 10, 0]
        matmul_inner_dims_order = [1, 2, 0]
      : (!transform.op<"linalg.generic">) -> !transform.op<"linalg.generic">
      transform.yield
  }
}
