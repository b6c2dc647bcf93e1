// Payload for the LDS estimator tests: f16, bf16, i8 and f32 matmuls and an f16 batch matmul.
func.func @mm_f16(%a: tensor<1024x512xf16>, %b: tensor<512x2048xf16>) -> tensor<1024x2048xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x2048xf32>) -> tensor<1024x2048xf32>
  %r = linalg.matmul ins(%a, %b : tensor<1024x512xf16>, tensor<512x2048xf16>) outs(%f : tensor<1024x2048xf32>) -> tensor<1024x2048xf32>
  return %r : tensor<1024x2048xf32>
}
func.func @mm_bf16(%a: tensor<512x512xbf16>, %b: tensor<512x1024xbf16>) -> tensor<512x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %r = linalg.matmul ins(%a, %b : tensor<512x512xbf16>, tensor<512x1024xbf16>) outs(%f : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}
func.func @mm_i8(%a: tensor<512x1024xi8>, %b: tensor<1024x512xi8>) -> tensor<512x512xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<512x512xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<512x512xi32>) -> tensor<512x512xi32>
  %r = linalg.matmul ins(%a, %b : tensor<512x1024xi8>, tensor<1024x512xi8>) outs(%f : tensor<512x512xi32>) -> tensor<512x512xi32>
  return %r : tensor<512x512xi32>
}
func.func @mm_f32(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}
func.func @bmm_f16(%a: tensor<8x512x256xf16>, %b: tensor<8x256x512xf16>) -> tensor<8x512x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x512x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<8x512x256xf16>, tensor<8x256x512xf16>) outs(%f : tensor<8x512x512xf32>) -> tensor<8x512x512xf32>
  return %r : tensor<8x512x512xf32>
}
