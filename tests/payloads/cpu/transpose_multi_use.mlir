func.func @transposed_rhs_also_returned(%a: tensor<256x512xf32>, %b: tensor<384x512xf32>) -> (tensor<256x384xf32>, tensor<512x384xf32>) {
  %cst = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %et = tensor.empty() : tensor<512x384xf32>
  %bt = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<384x512xf32>) outs(%et : tensor<512x384xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %two : f32
    linalg.yield %s : f32
  } -> tensor<512x384xf32>
  %e = tensor.empty() : tensor<256x384xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  %mm = linalg.matmul ins(%a, %bt : tensor<256x512xf32>, tensor<512x384xf32>) outs(%f : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %mm, %bt : tensor<256x384xf32>, tensor<512x384xf32>
}
func.func @transposed_lhs_also_returned(%arg0 : tensor<512x256xf32>, %arg1 : tensor<256x512xf32>)  -> (tensor<256x256xf32>, tensor<256x512xf32>) {
    %0 = tensor.empty() : tensor<256x512xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<512x256xf32>) outs(%0 : tensor<256x512xf32>) {
    ^bb0(%in: f32 , %out: f32 ):
        linalg.yield %in : f32
    } -> tensor<256x512xf32>
    %empty = tensor.empty() : tensor<256x256xf32>
    %cst = arith.constant 0.0 : f32
    %fill = linalg.fill ins(%cst : f32) outs(%empty : tensor<256x256xf32>) -> tensor<256x256xf32>
    %2 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%1, %arg1 : tensor<256x512xf32>, tensor<256x512xf32>) outs(%fill : tensor<256x256xf32>) -> tensor<256x256xf32>
    return %2, %1 : tensor<256x256xf32>, tensor<256x512xf32>
}
func.func @named_transpose_also_returned(%a: tensor<256x512xf32>, %b: tensor<384x512xf32>) -> (tensor<256x384xf32>, tensor<512x384xf32>) {
  %cst = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<512x384xf32>
  %bt = linalg.transpose ins(%b : tensor<384x512xf32>) outs(%et : tensor<512x384xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<256x384xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<256x384xf32>) -> tensor<256x384xf32>
  %mm = linalg.matmul ins(%a, %bt : tensor<256x512xf32>, tensor<512x384xf32>) outs(%f : tensor<256x384xf32>) -> tensor<256x384xf32>
  return %mm, %bt : tensor<256x384xf32>, tensor<512x384xf32>
}
