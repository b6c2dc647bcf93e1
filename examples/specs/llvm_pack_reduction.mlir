// Source: llvm/llvm-project, mlir/test/Dialect/Linalg/transform-op-pack.mlir (commit
// 2bde5ff5142a0bf14ed7cb23b5db25424d975f0d, Apache-2.0 WITH LLVM-exception),
// the spec of its first case (@reduction_2d_static), verbatim: packs the reduction loop of
// every linalg.generic by 4 (transform.structured.pack).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg1: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.generic"]} in %arg1 : (!transform.any_op) -> !transform.any_op
    transform.structured.pack %0 packed_sizes = [0, 4]
        : (!transform.any_op) -> (!transform.op<"linalg.generic">)
        transform.yield
  }
}
