func.func @attention(%q: tensor<2x10x4096x64xf16>, %k: tensor<2x10x64x64xf16>, %v: tensor<2x10x64x64xf16>) -> tensor<2x4096x10x64xf16> {
  %scale = arith.constant 0.125 : f16
  %empty = tensor.empty() : tensor<2x10x4096x64xf16>
  %0 = iree_linalg_ext.attention <{indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> ()>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>]}> ins(%q, %k, %v, %scale : tensor<2x10x4096x64xf16>, tensor<2x10x64x64xf16>, tensor<2x10x64x64xf16>, f16) outs(%empty : tensor<2x10x4096x64xf16>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<2x10x4096x64xf16>
  %e2 = tensor.empty() : tensor<2x4096x10x64xf16>
  %t = linalg.transpose ins(%0 : tensor<2x10x4096x64xf16>) outs(%e2 : tensor<2x4096x10x64xf16>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x4096x10x64xf16>
}
