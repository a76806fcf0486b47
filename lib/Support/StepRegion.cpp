//===- StepRegion.cpp - the (tokens, labels) region of a step -------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Support/StepRegion.h"

using namespace mlir;

namespace cgpt {

ParseResult parseStepRegion(OpAsmParser &parser, OperationState &result) {
  SmallVector<OpAsmParser::Argument> arguments;
  if (parser.parseArgumentList(arguments, OpAsmParser::Delimiter::Paren,
                               /*allowType=*/true) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  return parser.parseRegion(*result.addRegion(), arguments);
}

void printStepRegion(OpAsmPrinter &printer, Operation *op, Region &region,
                     ArrayRef<StringRef> elided) {
  printer << '(';
  llvm::interleaveComma(
      region.front().getArguments(), printer,
      [&](BlockArgument arg) { printer.printRegionArgument(arg); });
  printer << ')';
  printer.printOptionalAttrDictWithKeyword(op->getAttrs(), elided);
  printer << ' ';
  printer.printRegion(region, /*printEntryBlockArgs=*/false);
}

void nameStepArguments(Region &region, OpAsmSetValueNameFn setName) {
  if (region.empty() || region.front().getNumArguments() != 2)
    return;
  setName(region.front().getArgument(0), "tokens");
  setName(region.front().getArgument(1), "labels");
}

} // namespace cgpt
