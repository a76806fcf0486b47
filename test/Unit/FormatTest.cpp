//===- FormatTest.cpp - number formatting ---------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/Format.h"

#include "mlir/IR/BuiltinTypes.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace cgpt;

TEST(FormatExactDouble, ShortestDecimalThatRoundTrips) {
  EXPECT_EQ(formatExactDouble(0.9), "0.9");
  EXPECT_EQ(formatExactDouble(10.0), "10.0");
  EXPECT_EQ(formatExactDouble(0.0), "0.0");
  EXPECT_EQ(formatExactDouble(6e-4), "0.0006");
  EXPECT_EQ(formatExactDouble(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(formatExactDouble(-0.5), "-0.5");
}

TEST(FormatExactDouble, ExponentsKeepAMantissaDot) {
  // MLIR's float literal needs the '.': "1e-08" would not parse back.
  EXPECT_EQ(formatExactDouble(1e-8), "1.0e-08");
  EXPECT_EQ(formatExactDouble(2e-5), "2.0e-05");
  EXPECT_EQ(formatExactDouble(1e20), "1.0e+20");
}

TEST(FormatExactDouble, EveryOutputReadsBackExactly) {
  for (double value : {0.95, 1e-9, 6.0e-3, 0.00048828125, 2.09e-6, 123456.789,
                       0.010327955589886445})
    EXPECT_EQ(std::strtod(formatExactDouble(value).c_str(), nullptr), value);
}

TEST(FormatGrouped, ThousandsSeparators) {
  EXPECT_EQ(formatGrouped(111050496), "111,050,496");
  EXPECT_EQ(formatGrouped(999), "999");
  EXPECT_EQ(formatGrouped(1000), "1,000");
  EXPECT_EQ(formatGrouped(-1234567), "-1,234,567");
}

TEST(FormatShape, DynamicDimensionsAsQuestionMarks) {
  EXPECT_EQ(formatShape({mlir::ShapedType::kDynamic, 2048, 768}),
            "[?, 2048, 768]");
  EXPECT_EQ(formatShape({}), "[]");
}
