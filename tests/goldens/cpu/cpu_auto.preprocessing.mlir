#map = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)>
#map2 = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map4 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map5 = affine_map<(d0, d1, d2) -> (d0, d1)>
module {
  func.func @odd(%arg0: tensor<100x250xf32>, %arg1: tensor<250x70xf32>) -> tensor<100x70xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<100x70xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<100x70xf32>) -> tensor<100x70xf32>
    %2 = tensor.empty() : tensor<17x250x6x1xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %pack = linalg.pack %arg0 padding_value(%cst_0 : f32) inner_dims_pos = [0, 1] inner_tiles = [6, 1] into %2 : tensor<100x250xf32> -> tensor<17x250x6x1xf32>
    %3 = tensor.empty() : tensor<250x5x16x1xf32>
    %cst_1 = arith.constant 0.000000e+00 : f32
    %4 = tensor.empty() : tensor<5x250x16x1xf32>
    %pack_2 = linalg.pack %arg1 padding_value(%cst_1 : f32) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [16, 1] into %4 : tensor<250x70xf32> -> tensor<5x250x16x1xf32>
    %5 = tensor.empty() : tensor<17x5x6x16xf32>
    %cst_3 = arith.constant 0.000000e+00 : f32
    %pack_4 = linalg.pack %1 padding_value(%cst_3 : f32) inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %5 : tensor<100x70xf32> -> tensor<17x5x6x16xf32>
    %6 = linalg.mmt4d {indexing_maps = [#map, #map1, #map2], tdsl.layout = "avx2_f32_f32_mk_kn", tdsl.layout_rule = 2 : i64} ins(%pack, %pack_2 : tensor<17x250x6x1xf32>, tensor<5x250x16x1xf32>) outs(%pack_4 : tensor<17x5x6x16xf32>) -> tensor<17x5x6x16xf32>
    %unpack = linalg.unpack %6 inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %1 : tensor<17x5x6x16xf32> -> tensor<100x70xf32>
    return %unpack : tensor<100x70xf32>
  }
  func.func @mt(%arg0: tensor<128x128xf32>, %arg1: tensor<96x128xf32>) -> tensor<128x96xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<128x96xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<128x96xf32>) -> tensor<128x96xf32>
    %2 = tensor.empty() : tensor<22x128x6x1xf32>
    %cst_0 = arith.constant 0.000000e+00 : f32
    %pack = linalg.pack %arg0 padding_value(%cst_0 : f32) inner_dims_pos = [0, 1] inner_tiles = [6, 1] into %2 : tensor<128x128xf32> -> tensor<22x128x6x1xf32>
    %3 = tensor.empty() : tensor<6x128x16x1xf32>
    %pack_1 = linalg.pack %arg1 inner_dims_pos = [0, 1] inner_tiles = [16, 1] into %3 : tensor<96x128xf32> -> tensor<6x128x16x1xf32>
    %4 = tensor.empty() : tensor<22x6x6x16xf32>
    %cst_2 = arith.constant 0.000000e+00 : f32
    %pack_3 = linalg.pack %1 padding_value(%cst_2 : f32) inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %4 : tensor<128x96xf32> -> tensor<22x6x6x16xf32>
    %5 = linalg.mmt4d {indexing_maps = [#map, #map1, #map2], tdsl.layout = "avx2_f32_f32_mk_nk", tdsl.layout_rule = 3 : i64} ins(%pack, %pack_1 : tensor<22x128x6x1xf32>, tensor<6x128x16x1xf32>) outs(%pack_3 : tensor<22x6x6x16xf32>) -> tensor<22x6x6x16xf32>
    %unpack = linalg.unpack %5 inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %1 : tensor<22x6x6x16xf32> -> tensor<128x96xf32>
    return %unpack : tensor<128x96xf32>
  }
  func.func @bmm(%arg0: tensor<3x40x72xf32>, %arg1: tensor<3x72x56xf32>) -> tensor<3x40x56xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<3x40x56xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x40x56xf32>) -> tensor<3x40x56xf32>
    %2 = linalg.batch_matmul ins(%arg0, %arg1 : tensor<3x40x72xf32>, tensor<3x72x56xf32>) outs(%1 : tensor<3x40x56xf32>) -> tensor<3x40x56xf32>
    return %2 : tensor<3x40x56xf32>
  }
  func.func @mv(%arg0: tensor<1x512xf32>, %arg1: tensor<512x1024xf32>) -> tensor<1x1024xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<1x1024xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x1024xf32>) -> tensor<1x1024xf32>
    %2 = linalg.generic {indexing_maps = [#map3, #map4, #map5], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x512xf32>, tensor<512x1024xf32>) outs(%1 : tensor<1x1024xf32>) attrs =  {tdsl.layout = "avx2_f32_f32_matvec_default", tdsl.layout_rule = 0 : i64} {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %3 = arith.mulf %in, %in_0 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    } -> tensor<1x1024xf32>
    return %2 : tensor<1x1024xf32>
  }
  func.func @h(%arg0: tensor<64x160xf16>, %arg1: tensor<160x80xf16>) -> tensor<64x80xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<64x80xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<64x80xf32>) -> tensor<64x80xf32>
    %2 = tensor.empty() : tensor<11x160x6x1xf16>
    %cst_0 = arith.constant 0.000000e+00 : f16
    %pack = linalg.pack %arg0 padding_value(%cst_0 : f16) inner_dims_pos = [0, 1] inner_tiles = [6, 1] into %2 : tensor<64x160xf16> -> tensor<11x160x6x1xf16>
    %3 = tensor.empty() : tensor<160x5x16x1xf16>
    %4 = tensor.empty() : tensor<5x160x16x1xf16>
    %pack_1 = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [16, 1] into %4 : tensor<160x80xf16> -> tensor<5x160x16x1xf16>
    %5 = tensor.empty() : tensor<11x5x6x16xf32>
    %cst_2 = arith.constant 0.000000e+00 : f32
    %pack_3 = linalg.pack %1 padding_value(%cst_2 : f32) inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %5 : tensor<64x80xf32> -> tensor<11x5x6x16xf32>
    %6 = linalg.mmt4d {indexing_maps = [#map, #map1, #map2], tdsl.layout = "avx2_f16_f32_mk_kn", tdsl.layout_rule = 6 : i64} ins(%pack, %pack_1 : tensor<11x160x6x1xf16>, tensor<5x160x16x1xf16>) outs(%pack_3 : tensor<11x5x6x16xf32>) -> tensor<11x5x6x16xf32>
    %unpack = linalg.unpack %6 inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %1 : tensor<11x5x6x16xf32> -> tensor<64x80xf32>
    return %unpack : tensor<64x80xf32>
  }
  func.func @q(%arg0: tensor<64x160xi8>, %arg1: tensor<160x80xi8>) -> tensor<64x80xi32> {
    %c0_i32 = arith.constant 0 : i32
    %0 = tensor.empty() : tensor<64x80xi32>
    %1 = linalg.fill ins(%c0_i32 : i32) outs(%0 : tensor<64x80xi32>) -> tensor<64x80xi32>
    %2 = tensor.empty() : tensor<11x160x6x1xi8>
    %c0_i8 = arith.constant 0 : i8
    %pack = linalg.pack %arg0 padding_value(%c0_i8 : i8) inner_dims_pos = [0, 1] inner_tiles = [6, 1] into %2 : tensor<64x160xi8> -> tensor<11x160x6x1xi8>
    %3 = tensor.empty() : tensor<160x5x16x1xi8>
    %4 = tensor.empty() : tensor<5x160x16x1xi8>
    %pack_0 = linalg.pack %arg1 outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [16, 1] into %4 : tensor<160x80xi8> -> tensor<5x160x16x1xi8>
    %5 = tensor.empty() : tensor<11x5x6x16xi32>
    %c0_i32_1 = arith.constant 0 : i32
    %pack_2 = linalg.pack %1 padding_value(%c0_i32_1 : i32) inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %5 : tensor<64x80xi32> -> tensor<11x5x6x16xi32>
    %6 = linalg.mmt4d {indexing_maps = [#map, #map1, #map2], tdsl.layout = "avx2_i8_i32_mk_kn", tdsl.layout_rule = 14 : i64} ins(%pack, %pack_0 : tensor<11x160x6x1xi8>, tensor<5x160x16x1xi8>) outs(%pack_2 : tensor<11x5x6x16xi32>) -> tensor<11x5x6x16xi32>
    %unpack = linalg.unpack %6 inner_dims_pos = [0, 1] inner_tiles = [6, 16] into %1 : tensor<11x5x6x16xi32> -> tensor<64x80xi32>
    return %unpack : tensor<64x80xi32>
  }
}
