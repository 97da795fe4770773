# envlock_library(NAME DIR DEPS...): one static library per folder, from the folder's *.cpp.
# Only the project root is on the include path, so a header is always named by its folder
# ("resolver/specs/pep440.hpp"); which folders a file may name is checked by check_layout.cmake.
function(envlock_library name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(${name} STATIC ${sources} ${ARGN})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  add_dependencies(${name} envlock_layout_check)
endfunction()
