# Writes ${OUTPUT}: cgpt's version and, when the sources are a git checkout,
# the commit they are at (with "-dirty" for uncommitted changes). Run at
# every build by the cgpt-version target; the file is rewritten only when
# its text changes, so an unchanged commit rebuilds nothing.
set(commit "")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE status ERROR_QUIET)
  if(NOT status EQUAL 0)
    set(commit "")
  else()
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain
                            --untracked-files=no
                    WORKING_DIRECTORY ${SOURCE_DIR}
                    OUTPUT_VARIABLE changes ERROR_QUIET)
    if(NOT changes STREQUAL "")
      set(commit "${commit}-dirty")
    endif()
  endif()
endif()
set(text "#define CGPT_VERSION \"${VERSION}\"\n#define CGPT_GIT_COMMIT \"${commit}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
