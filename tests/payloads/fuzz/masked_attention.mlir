// Attention with a bool (i1) mask as real frontends export it: scores = Q K^T, scaled,
// masked to -inf where the mask is false (a select on the mask), softmax, then P V. The
// masked scores are a second result: they hold -inf.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%q: tensor<64x32xf32>, %kt: tensor<32x64xf32>, %v: tensor<64x32xf32>, %mask: tensor<64x64xi1>)
    -> (tensor<64x32xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.176776695 : f32
  %e0 = tensor.empty() : tensor<64x64xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %masked = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<64x64xf32>, tensor<64x64xi1>) outs(%e0 : tensor<64x64xf32>) {
  ^bb0(%a: f32, %m: i1, %o: f32):
    %x = arith.mulf %a, %scale : f32
    %y = arith.select %m, %x, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<64x64xf32>
  %e1 = tensor.empty() : tensor<64x64xf32>
  %p = linalg.softmax dimension(1) ins(%masked : tensor<64x64xf32>) outs(%e1 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %o = linalg.matmul ins(%p, %v : tensor<64x64xf32>, tensor<64x32xf32>) outs(%f2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %o, %masked : tensor<64x32xf32>, tensor<64x64xf32>
}
