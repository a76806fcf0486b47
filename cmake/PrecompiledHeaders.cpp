//===- PrecompiledHeaders.cpp - the target that compiles them -------------===//
//
// Part of cgpt. CMake compiles cmake/PrecompiledHeaders.h for this target
// and every other C++ target reuses it.
//
//===----------------------------------------------------------------------===//
