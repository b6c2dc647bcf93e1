// Convolutions as a batch-2 CNN exports them (NCHW, weights as arguments): a 3x3 conv, a
// dilated grouped conv (nn.Conv2d(groups=4, dilation=2)), a batch-1 conv and a max pool.
func.func @nchw_3x3(%x: tensor<2x16x18x18xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<2x32x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x32x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  return %r : tensor<2x32x16x16xf32>
}
func.func @grouped_dilated(%x: tensor<2x4x8x12x12xf32>, %w: tensor<4x8x8x3x3xf32>) -> tensor<2x4x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8x8xf32>) -> tensor<2x4x8x8x8xf32>
  %r = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x4x8x12x12xf32>, tensor<4x8x8x3x3xf32>) outs(%f : tensor<2x4x8x8x8xf32>) -> tensor<2x4x8x8x8xf32>
  return %r : tensor<2x4x8x8x8xf32>
}
func.func @batch1_3x3(%x: tensor<1x16x18x18xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}
func.func @max_pool(%x: tensor<2x16x16x16xf32>) -> tensor<2x16x8x8xf32> {
  %ninf = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<2x16x8x8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %r = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<2x16x16x16xf32>, tensor<2x2xf32>) outs(%f : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
  return %r : tensor<2x16x8x8xf32>
}
