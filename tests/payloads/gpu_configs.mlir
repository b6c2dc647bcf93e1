// Payload for tests/cases.py GPU_CONFIGS (gfx942): an f16 matmul with transposed B and a
// batch-2 f16 3x3 convolution, both accumulating in f32.
func.func @mm_nt(%a: tensor<1024x512xf16>, %b: tensor<2048x512xf16>) -> tensor<1024x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x2048xf32>) -> tensor<1024x2048xf32>
  %r = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : tensor<1024x512xf16>, tensor<2048x512xf16>) outs(%f : tensor<1024x2048xf32>) -> tensor<1024x2048xf32>
  return %r : tensor<1024x2048xf32>
}
func.func @conv(%x: tensor<2x34x34x64xf16>, %w: tensor<3x3x64x128xf16>) -> tensor<2x32x32x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x32x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x32x128xf32>) -> tensor<2x32x32x128xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x34x34x64xf16>, tensor<3x3x64x128xf16>) outs(%f : tensor<2x32x32x128xf32>) -> tensor<2x32x32x128xf32>
  return %r : tensor<2x32x32x128xf32>
}
