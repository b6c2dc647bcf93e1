// Quantized matmuls as QLinearMatMul / MatMulInteger import them: a 2-D
// linalg.quantized_matmul with zero points, and a 3-D i8 x i8 -> i32 batch matmul.
func.func @main(%a: tensor<32x64xi8>, %b: tensor<64x48xi8>, %x: tensor<2x32x64xi8>, %y: tensor<2x64x48xi8>)
    -> (tensor<32x48xi32>, tensor<2x32x48xi32>) {
  %zero = arith.constant 0 : i32
  %za = arith.constant 3 : i32
  %zb = arith.constant -2 : i32
  %e = tensor.empty() : tensor<32x48xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<32x48xi32>) -> tensor<32x48xi32>
  %q = linalg.quantized_matmul ins(%a, %b, %za, %zb : tensor<32x64xi8>, tensor<64x48xi8>, i32, i32)
      outs(%f : tensor<32x48xi32>) -> tensor<32x48xi32>
  %e3 = tensor.empty() : tensor<2x32x48xi32>
  %f3 = linalg.fill ins(%zero : i32) outs(%e3 : tensor<2x32x48xi32>) -> tensor<2x32x48xi32>
  %r = linalg.batch_matmul ins(%x, %y : tensor<2x32x64xi8>, tensor<2x64x48xi8>) outs(%f3 : tensor<2x32x48xi32>) -> tensor<2x32x48xi32>
  return %q, %r : tensor<32x48xi32>, tensor<2x32x48xi32>
}
