// A 3x3 NHWC convolution, batch 2: 2x34x34x32 * 3x3x32x64 -> 2x32x32x64 (f32).
func.func @conv(%x: tensor<2x34x34x32xf32>, %w: tensor<3x3x32x64xf32>) -> tensor<2x32x32x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x32x32x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x32x32x64xf32>) -> tensor<2x32x32x64xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x34x34x32xf32>, tensor<3x3x32x64xf32>) outs(%acc : tensor<2x32x32x64xf32>) -> tensor<2x32x32x64xf32>
  return %r : tensor<2x32x32x64xf32>
}
