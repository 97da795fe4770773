# envlock_library(NAME DIR DEPS...): one static library per folder, from the folder's *.cpp.
# Only the project root is on the include path, so a header is always named by its folder
# ("resolver/specs/pep440.hpp"); which folders a file may name is checked by check_layout.cmake.
function(envlock_library name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(${name} STATIC ${sources} ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  add_dependencies(${name} envlock_layout_check)
endfunction()

# envlock_embed(VAR NAMESPACE FUNCTION INPUTS...): a generated source of the files' contents as
# raw string literals (cmake/embed.cmake), its path in VAR, so the binary carries its data.
function(envlock_embed var namespace function)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${function}.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAMESPACE=${namespace} -DFUNCTION=${function}
            "-DINPUTS=${ARGN}" -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${ARGN} ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    COMMENT "Embedding ${function}" VERBATIM)
  set(${var} ${out} PARENT_SCOPE)
endfunction()
