# The version of this build, for `--version`, the daemon's start line and the Debian package.
# In a git checkout: the project version with `git describe` (PINPOINT_VERSION_TEXT, e.g.
# "0.1.0 (git 6071c49-dirty)") and a Debian version that grows with every commit
# (PINPOINT_DEB_VERSION, "0.1.0+git412.6071c49"). Elsewhere (a source tarball, no git): the
# project version alone. A commit or checkout re-runs this (HEAD's reflog is a configure
# dependency); only the generated version.cc is rebuilt then.
set(PINPOINT_VERSION_TEXT ${PROJECT_VERSION})
set(PINPOINT_DEB_VERSION ${PROJECT_VERSION})
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  macro(pinpoint_git out)
    execute_process(COMMAND ${GIT_EXECUTABLE} ${ARGN} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE ${out} RESULT_VARIABLE pinpoint_git_rc ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT pinpoint_git_rc EQUAL 0)
      set(${out} "")
    endif()
  endmacro()
  pinpoint_git(describe describe --always --dirty --tags)
  pinpoint_git(count rev-list --count HEAD)
  pinpoint_git(hash rev-parse --short HEAD)
  pinpoint_git(reflog rev-parse --path-format=absolute --git-path logs/HEAD)
  if(describe)
    set(PINPOINT_VERSION_TEXT "${PROJECT_VERSION} (git ${describe})")
  endif()
  if(count AND hash)
    set(PINPOINT_DEB_VERSION "${PROJECT_VERSION}+git${count}.${hash}")
  endif()
  if(reflog AND EXISTS ${reflog})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${reflog})
  endif()
endif()
message(STATUS "pinpoint: version ${PINPOINT_VERSION_TEXT}")
configure_file(${PROJECT_SOURCE_DIR}/src/common/version.cc.in ${CMAKE_BINARY_DIR}/generated/version.cc @ONLY)
