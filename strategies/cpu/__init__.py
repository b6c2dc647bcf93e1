"""llvm-cpu strategy library (packing, tiling, fusion) and its chooser."""
