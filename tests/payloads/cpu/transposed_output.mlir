func.func @tout(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> tensor<96x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<96x64xf32>) -> tensor<96x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f : tensor<96x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<96x64xf32>
  return %r : tensor<96x64xf32>
}
func.func @plain(%a: tensor<64x128xf32>, %b: tensor<128x96xf32>) -> tensor<64x96xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x96xf32>) outs(%f : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}
