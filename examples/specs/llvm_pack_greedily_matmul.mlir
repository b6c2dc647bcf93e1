// Source: llvm/llvm-project, mlir/test/Dialect/Linalg/transform-pack-greedily.mlir (commit
// 13f71d57ae1660a45207b0e3bc26adc98dc1489f, Apache-2.0 WITH LLVM-exception),
// the spec of its first case, verbatim: an imperative preprocessing spec that packs every
// linalg.matmul greedily (m, n, k tiles 8, 16, 32, inner order n, k, m).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module_op: !transform.any_op {transform.readonly}) {
    %matmul = transform.structured.match ops{["linalg.matmul"]} in %module_op
      : (!transform.any_op) -> !transform.op<"linalg.matmul">
    transform.structured.pack_greedily %matmul
        matmul_packed_sizes = [8, 16, 32] matmul_inner_dims_order = [1, 2, 0]
      : (!transform.op<"linalg.matmul">) -> !transform.op<"linalg.generic">
      transform.yield
  }
}
