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
