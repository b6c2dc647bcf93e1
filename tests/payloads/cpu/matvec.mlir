func.func @mv(%a: tensor<1x700xf32>, %b: tensor<700x1000xf32>) -> tensor<1x1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x700xf32>, tensor<700x1000xf32>) outs(%f : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %r : tensor<1x1000xf32>
}
func.func @mv_transposed(%a: tensor<1x700xf32>, %b: tensor<1000x700xf32>) -> tensor<1x1000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : tensor<1x700xf32>, tensor<1000x700xf32>) outs(%f : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %r : tensor<1x1000xf32>
}
