// nn.Linear on a (2, 64, 128) input as torch.onnx.export emits it: a batch matmul whose
// RHS, a constant weight, is broadcast over the batch (IREE rebuilds it as a 128x256x128
// matmul before codegen).
util.global private @w = #util.byte_pattern<1> : tensor<128x256xf32>
func.func @linear(%a: tensor<2x64x128xf32>) -> tensor<2x64x256xf32> {
  %w = util.global.load @w : tensor<128x256xf32>
  %eb = tensor.empty() : tensor<2x128x256xf32>
  %b = linalg.broadcast ins(%w : tensor<128x256xf32>) outs(%eb : tensor<2x128x256xf32>) dimensions = [0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x64x256xf32>) -> tensor<2x64x256xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x64x128xf32>, tensor<2x128x256xf32>) outs(%f : tensor<2x64x256xf32>) -> tensor<2x64x256xf32>
  return %r : tensor<2x64x256xf32>
}
