// Source: llvm/llvm-project, mlir/test/Dialect/Linalg/transform-op-pack.mlir (commit
// 2bde5ff5142a0bf14ed7cb23b5db25424d975f0d, Apache-2.0 WITH LLVM-exception),
// the spec of its second case (@col_reduction_2d_static), verbatim: packs the reduction
// loop by 4, then transposes the outer dims of the input's pack (pack_transpose).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg1: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.generic"]} in %arg1 : (!transform.any_op) -> !transform.any_op
    %1 = transform.structured.pack %0 packed_sizes = [4, 0]
        : (!transform.any_op) -> (!transform.op<"linalg.generic">)
    %pack = transform.get_producer_of_operand %1[0]
      : (!transform.op<"linalg.generic">) -> (!transform.op<"linalg.pack">)
    %2, %pack_2, %empty_unpack_2 =
      transform.structured.pack_transpose %pack with_compute_op(%1)
      outer_perm = [1, 0]
       : (!transform.op<"linalg.pack">, !transform.op<"linalg.generic">)
      -> (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">, !transform.any_op)
      transform.yield
  }
}
