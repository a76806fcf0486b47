# One doc macro for the whole project, so every dialect and pass reaches the
# generated reference. `cgpt-doc` generates it under build/docs;
# `cgpt-update-docs` copies it into docs/ (committed, and checked fresh by
# test/docs-fresh.test).
add_custom_target(cgpt-doc)
set_property(GLOBAL PROPERTY CGPT_GENERATED_DOCS "")

# Extra arguments go to mlir-tblgen (e.g. -dialect=NAME where a .td file
# sees several dialects).
function(add_cgpt_doc td_filename output_file output_directory command)
  add_mlir_doc(${td_filename} ${output_file} ${output_directory} ${command}
               ${ARGN})
  add_dependencies(cgpt-doc ${output_file}DocGen)
  set_property(GLOBAL APPEND PROPERTY CGPT_GENERATED_DOCS
               "${output_directory}${output_file}.md")
endfunction()

function(add_cgpt_update_docs_target)
  get_property(docs GLOBAL PROPERTY CGPT_GENERATED_DOCS)
  set(commands)
  foreach(doc ${docs})
    list(APPEND commands COMMAND ${CMAKE_COMMAND} -E copy
         ${CMAKE_BINARY_DIR}/docs/${doc} ${CGPT_SOURCE_DIR}/docs/${doc})
  endforeach()
  add_custom_target(cgpt-update-docs ${commands} DEPENDS cgpt-doc
    COMMENT "Copying the generated dialect and pass reference into docs/")
endfunction()

# Precompiled headers: every translation unit of ours first parses the same
# MLIR, LLVM and standard headers, most of its compile time. One header
# file, compiled once in CGPTPrecompiledHeaders, serves every C++ target
# of the project (all share its flags); -DCGPT_PRECOMPILED_HEADERS=OFF
# compiles without it.
function(cgpt_collect_targets directory result)
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(subdirectory ${subdirectories})
    cgpt_collect_targets(${subdirectory} nested)
    list(APPEND targets ${nested})
  endforeach()
  set(${result} ${targets} PARENT_SCOPE)
endfunction()

function(cgpt_precompile_headers)
  add_library(CGPTPrecompiledHeaders OBJECT
    ${CGPT_SOURCE_DIR}/cmake/PrecompiledHeaders.cpp)
  target_precompile_headers(CGPTPrecompiledHeaders PRIVATE
    ${CGPT_SOURCE_DIR}/cmake/PrecompiledHeaders.h)
  # LLVM's flags for a target of its own (no exceptions, no RTTI): those of
  # every target that reuses the header, or GCC sets it aside.
  llvm_update_compile_flags(CGPTPrecompiledHeaders)
  cgpt_collect_targets(${CGPT_SOURCE_DIR} targets)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    get_target_property(sources ${target} SOURCES)
    if(NOT (type STREQUAL "OBJECT_LIBRARY" OR type STREQUAL "EXECUTABLE")
       OR target STREQUAL "CGPTPrecompiledHeaders" OR NOT sources)
      continue()
    endif()
    list(FILTER sources INCLUDE REGEX "\\.cpp$")
    if(sources)
      target_precompile_headers(${target} REUSE_FROM CGPTPrecompiledHeaders)
    endif()
  endforeach()
endfunction()
