func.func @nhwc_3x3(%x: tensor<2x19x17x30xf32>, %w: tensor<3x3x30x37xf32>) -> tensor<2x17x15x37xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x17x15x37xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x17x15x37xf32>) -> tensor<2x17x15x37xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x19x17x30xf32>, tensor<3x3x30x37xf32>) outs(%f : tensor<2x17x15x37xf32>) -> tensor<2x17x15x37xf32>
  return %r : tensor<2x17x15x37xf32>
}
func.func @nchw_3x3_stride2(%x: tensor<1x24x21x21xf32>, %w: tensor<40x24x3x3xf32>) -> tensor<1x40x10x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x40x10x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x40x10x10xf32>) -> tensor<1x40x10x10xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x24x21x21xf32>, tensor<40x24x3x3xf32>) outs(%f : tensor<1x40x10x10xf32>) -> tensor<1x40x10x10xf32>
  return %r : tensor<1x40x10x10xf32>
}
func.func @nhwc_1x1(%x: tensor<1x28x28x48xf32>, %w: tensor<1x1x48x72xf32>) -> tensor<1x28x28x72xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x28x28x72xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x28x28x72xf32>) -> tensor<1x28x28x72xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x28x28x48xf32>, tensor<1x1x48x72xf32>) outs(%f : tensor<1x28x28x72xf32>) -> tensor<1x28x28x72xf32>
  return %r : tensor<1x28x28x72xf32>
}
