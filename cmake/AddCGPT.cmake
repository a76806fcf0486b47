# One doc macro for the whole project, so every dialect and pass reaches the
# generated reference under build/docs and `cgpt-doc` (copied into docs/).
add_custom_target(cgpt-doc)

function(add_cgpt_doc td_filename output_file output_directory command)
  add_mlir_doc(${td_filename} ${output_file} ${output_directory} ${command})
  add_dependencies(cgpt-doc ${output_file}DocGen)
endfunction()
