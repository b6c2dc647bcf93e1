// Payload for tests/cases.py LAYOUT_VARIANTS (cpu): one function per rule.
func.func @matmul_odd(%a: tensor<100x250xf32>, %b: tensor<250x70xf32>) -> tensor<100x70xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x70xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x70xf32>) -> tensor<100x70xf32>
  %r = linalg.matmul ins(%a, %b : tensor<100x250xf32>, tensor<250x70xf32>) outs(%f : tensor<100x70xf32>) -> tensor<100x70xf32>
  return %r : tensor<100x70xf32>
}
func.func @matmul128(%a: tensor<128x64xf32>, %b: tensor<64x96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x96xf32>) outs(%f : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}
func.func @bmm(%a: tensor<2x64x32xf32>, %b: tensor<2x32x48xf32>) -> tensor<2x64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x48xf32>) -> tensor<2x64x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x64x32xf32>, tensor<2x32x48xf32>) outs(%f : tensor<2x64x48xf32>) -> tensor<2x64x48xf32>
  return %r : tensor<2x64x48xf32>
}
func.func @conv(%x: tensor<2x18x18x32xf32>, %w: tensor<3x3x32x64xf32>) -> tensor<2x16x16x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x18x18x32xf32>, tensor<3x3x32x64xf32>) outs(%f : tensor<2x16x16x64xf32>) -> tensor<2x16x16x64xf32>
  return %r : tensor<2x16x16x64xf32>
}
func.func @bmm1(%a: tensor<1x64x32xf32>, %b: tensor<1x32x48xf32>) -> tensor<1x64x48xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x48xf32>) -> tensor<1x64x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<1x64x32xf32>, tensor<1x32x48xf32>) outs(%f : tensor<1x64x48xf32>) -> tensor<1x64x48xf32>
  return %r : tensor<1x64x48xf32>
}
func.func @matmul_nk(%a: tensor<32x48xf32>, %b: tensor<64x48xf32>) -> tensor<32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<32x48xf32>, tensor<64x48xf32>) outs(%f : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}
