// One function with the convolutions of batch_convs.mlir (weights as globals): a batch-2
// 3x3 conv followed by a max pool, a dilated grouped conv and a batch-1 conv.
util.global private @w0 = #util.byte_pattern<1> : tensor<32x16x3x3xf32>
util.global private @w1 = #util.byte_pattern<2> : tensor<4x8x8x3x3xf32>
func.func @cnn(%x: tensor<2x16x18x18xf32>, %g: tensor<2x4x8x12x12xf32>, %y: tensor<1x16x18x18xf32>) -> (tensor<2x32x8x8xf32>, tensor<2x4x8x8x8xf32>, tensor<1x32x16x16xf32>) {
  %w0 = util.global.load @w0 : tensor<32x16x3x3xf32>
  %w1 = util.global.load @w1 : tensor<4x8x8x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x32x16x16xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %c0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w0 : tensor<2x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%f0 : tensor<2x32x16x16xf32>) -> tensor<2x32x16x16xf32>
  %ninf = arith.constant -3.40282347E+38 : f32
  %ep = tensor.empty() : tensor<2x32x8x8xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%c0, %k : tensor<2x32x16x16xf32>, tensor<2x2xf32>) outs(%fp : tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %e1 = tensor.empty() : tensor<2x4x8x8x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x8x8x8xf32>) -> tensor<2x4x8x8x8xf32>
  %c1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%g, %w1 : tensor<2x4x8x12x12xf32>, tensor<4x8x8x3x3xf32>) outs(%f1 : tensor<2x4x8x8x8xf32>) -> tensor<2x4x8x8x8xf32>
  %e2 = tensor.empty() : tensor<1x32x16x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%y, %w0 : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%f2 : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %p, %c1, %c2 : tensor<2x32x8x8xf32>, tensor<2x4x8x8x8xf32>, tensor<1x32x16x16xf32>
}
