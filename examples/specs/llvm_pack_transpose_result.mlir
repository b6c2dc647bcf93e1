// Source: llvm/llvm-project, mlir/test/Dialect/Linalg/transform-op-pack.mlir (commit
// 2bde5ff5142a0bf14ed7cb23b5db25424d975f0d, Apache-2.0 WITH LLVM-exception),
// the spec of its @matmul case, verbatim: packs every linalg.matmul (m, n, k tiles 2, 3, 4),
// then transposes the outer and inner dims of the result's unpack (pack_transpose).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg1: !transform.any_op {transform.readonly}) {
      %0 = transform.structured.match ops{["linalg.matmul"]} in %arg1 : (!transform.any_op) -> !transform.any_op
      //                                            M  N  K
      %1 = transform.structured.pack %0 packed_sizes = [2, 3, 4]
        : (!transform.any_op) -> (!transform.op<"linalg.generic">)

      %unpack = transform.get_consumers_of_result %1[0]
        : (!transform.op<"linalg.generic">) -> (!transform.op<"linalg.unpack">)
      %2, %pack_2, %unpack_2 =
        transform.structured.pack_transpose %unpack with_compute_op(%1)
        outer_perm = [1, 0] inner_perm = [1, 0]
        : (!transform.op<"linalg.unpack">, !transform.op<"linalg.generic">)
        -> (!transform.op<"linalg.generic">, !transform.op<"linalg.pack">, !transform.op<"linalg.unpack">)
        transform.yield
  }
}
