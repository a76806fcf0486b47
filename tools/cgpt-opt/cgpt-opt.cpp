//===- cgpt-opt.cpp - cgpt's mlir-opt -------------------------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//
//
// An mlir-opt with every cgpt dialect and pass. A model file (.yaml, .yml,
// .json) given as input is imported to transformer IR first, so one RUN line
// goes from a Model Zoo file to any later stage.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Frontend/ModelSpec.h"
#include "cgpt/InitAllDialects.h"
#include "cgpt/InitAllPasses.h"
#include "cgpt/Support/Debug.h"
#include "cgpt/Support/Diagnostics.h"
#include "cgpt/Support/InputFile.h"
#include "cgpt/Support/Nesting.h"
#include "cgpt/Support/OutputFiles.h"
#include "cgpt/Support/Version.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

/// The input as MLIR text: a model file is imported and printed with its
/// locations, so diagnostics of later passes still point into the file.
static std::unique_ptr<llvm::MemoryBuffer>
loadInput(llvm::StringRef path, DialectRegistry &registry) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      cgpt::readToolInput(path);
  if (!buffer) {
    llvm::errs() << "cgpt-opt: cannot read '" << path
                 << "': " << llvm::toString(buffer.takeError()) << "\n";
    return nullptr;
  }
  std::optional<cgpt::frontend::ModelFormat> format =
      cgpt::frontend::modelFormatOfInput(path, (*buffer)->getBuffer());
  MLIRContext context(registry);
  cgpt::PlainDiagnosticHandler diagnostics(&context, llvm::errs());
  if (!format) {
    if (failed(cgpt::checkNoNulBytes((*buffer)->getBufferIdentifier(),
                                     (*buffer)->getBuffer(), &context)) ||
        failed(cgpt::checkNestingDepth((*buffer)->getBufferIdentifier(),
                                       (*buffer)->getBuffer(),
                                       cgpt::TextSyntax::Mlir, &context)))
      return nullptr;
    return std::move(*buffer);
  }
  llvm::StringRef name = (*buffer)->getBufferIdentifier();
  FailureOr<cgpt::frontend::ModelSpec> spec = cgpt::frontend::readModelText(
      name, (*buffer)->getBuffer(), *format, &context);
  if (failed(spec))
    return nullptr;
  OwningOpRef<ModuleOp> module = cgpt::frontend::importModel(*spec, &context);
  if (!module)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  return llvm::MemoryBuffer::getMemBufferCopy(text, name);
}

int main(int argc, char **argv) {
  registerTransformsPasses();
  cgpt::registerAllPasses();
  DialectRegistry registry;
  cgpt::registerAllDialects(registry);

  llvm::cl::SetVersionPrinter(cgpt::printVersion);
  cgpt::registerDebugOptions();
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver(allocator);
  llvm::Expected<llvm::SmallVector<const char *>> args =
      cgpt::expandResponseFiles(argc, argv, saver);
  if (!args) {
    llvm::errs() << "cgpt-opt: " << llvm::toString(args.takeError()) << "\n";
    return EXIT_FAILURE;
  }
  // Diagnostics name the op by its location; printing the op too would
  // repeat a whole module after a pass error. --mlir-print-op-on-diagnostic
  // given by the user comes later and wins.
  args->insert(args->begin() + 1, "--mlir-print-op-on-diagnostic=false");
  auto [inputPath, outputPath] = registerAndParseCLIOptions(
      args->size(), const_cast<char **>(args->data()),
      "cgpt optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::unique_ptr<llvm::MemoryBuffer> input = loadInput(inputPath, registry);
  if (!input)
    return EXIT_FAILURE;
  // The output is written only when every pass succeeded, through
  // cgpt::OutputFiles: a failed run leaves an existing -o file as it was.
  if (llvm::Error error =
          cgpt::OutputFiles::checkWritable(outputPath, {inputPath})) {
    llvm::errs() << "cgpt-opt: -o '" << outputPath
                 << "': " << llvm::toString(std::move(error)) << "\n";
    return EXIT_FAILURE;
  }
  std::string result;
  llvm::raw_string_ostream os(result);
  if (failed(MlirOptMain(os, std::move(input), registry, config)))
    return EXIT_FAILURE;
  os.flush();
  cgpt::OutputFiles outputs;
  outputs.add(outputPath, std::move(result));
  llvm::outs().flush();
  if (llvm::Error error = outputs.commit()) {
    llvm::errs() << "cgpt-opt: " << llvm::toString(std::move(error)) << "\n";
    return EXIT_FAILURE;
  }
  if (llvm::outs().has_error()) {
    llvm::outs().clear_error();
    llvm::errs() << "cgpt-opt: cannot write standard output\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
