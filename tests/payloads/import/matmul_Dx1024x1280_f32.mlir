// The matmul of a dynamic-batch model: ?x1280 f32 activations times 1280x1024 f32 weights
// (its dispatch is matmul_Dx1024x1280).
func.func @dynamic_batch_matmul(%x: tensor<?x1280xf32>, %w: tensor<1280x1024xf32>) -> tensor<?x1024xf32> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x1280xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%b) : tensor<?x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x1280xf32>, tensor<1280x1024xf32>) outs(%init : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  return %y : tensor<?x1024xf32>
}
