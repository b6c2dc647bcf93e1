// Matmuls of several kinds: unaligned f32, transposed-B f32, batch f32 (left to IREE), f32 matrix-vector, f16 -> f32 and i8 -> i32.
func.func @odd(%a: tensor<100x250xf32>, %b: tensor<250x70xf32>) -> tensor<100x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x70xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x70xf32>) -> tensor<100x70xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x250xf32>, tensor<250x70xf32>) outs(%f : tensor<100x70xf32>) -> tensor<100x70xf32>
  return %r : tensor<100x70xf32>
}
func.func @mt(%a: tensor<128x128xf32>, %b: tensor<96x128xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<128x128xf32>, tensor<96x128xf32>) outs(%f : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}
func.func @bmm(%a: tensor<3x40x72xf32>, %b: tensor<3x72x56xf32>) -> tensor<3x40x56xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x40x56xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x40x56xf32>) -> tensor<3x40x56xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x40x72xf32>, tensor<3x72x56xf32>) outs(%f : tensor<3x40x56xf32>) -> tensor<3x40x56xf32>
  return %r : tensor<3x40x56xf32>
}
func.func @mv(%a: tensor<1x512xf32>, %b: tensor<512x1024xf32>) -> tensor<1x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1x512xf32>, tensor<512x1024xf32>) outs(%f : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  return %r : tensor<1x1024xf32>
}
func.func @h(%a: tensor<64x160xf16>, %b: tensor<160x80xf16>) -> tensor<64x80xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x80xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x80xf32>) -> tensor<64x80xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x160xf16>, tensor<160x80xf16>) outs(%f : tensor<64x80xf32>) -> tensor<64x80xf32>
  return %r : tensor<64x80xf32>
}
func.func @q(%a: tensor<64x160xi8>, %b: tensor<160x80xi8>) -> tensor<64x80xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64x80xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<64x80xi32>) -> tensor<64x80xi32>
  %r = linalg.matmul ins(%a, %b : tensor<64x160xi8>, tensor<160x80xi8>) outs(%f : tensor<64x80xi32>) -> tensor<64x80xi32>
  return %r : tensor<64x80xi32>
}
