// Two 1-D convolutions as torch.onnx.export writes nn.Conv1d on a batch (NCW, weights as
// globals): a k=3 conv with padding 1 (the input padded first) and a k=3 stride-2 conv.
// IREE's channels-last rewrite makes each an NWC conv between transposes before the
// graph-level rules run.
util.global private @w0 = #util.byte_pattern<1> : tensor<32x16x3xf32>
util.global private @w1 = #util.byte_pattern<2> : tensor<32x32x3xf32>
func.func @conv1d(%in: tensor<4x16x64xf32>) -> tensor<4x32x31xf32> {
  %w0 = util.global.load @w0 : tensor<32x16x3xf32>
  %w1 = util.global.load @w1 : tensor<32x32x3xf32>
  %zero = arith.constant 0.0 : f32
  %x = tensor.pad %in low[0, 0, 1] high[0, 0, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %zero : f32
  } : tensor<4x16x64xf32> to tensor<4x16x66xf32>
  %e0 = tensor.empty() : tensor<4x32x64xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %c0 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%x, %w0 : tensor<4x16x66xf32>, tensor<32x16x3xf32>) outs(%f0 : tensor<4x32x64xf32>) -> tensor<4x32x64xf32>
  %e1 = tensor.empty() : tensor<4x32x31xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x32x31xf32>) -> tensor<4x32x31xf32>
  %c1 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>} ins(%c0, %w1 : tensor<4x32x64xf32>, tensor<32x32x3xf32>) outs(%f1 : tensor<4x32x31xf32>) -> tensor<4x32x31xf32>
  return %c1 : tensor<4x32x31xf32>
}
