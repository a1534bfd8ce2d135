# What `make install` (cmake --install) and `make package` (CPack, a Debian package) install
# (docs/admin.md, "Installing"):
#   <prefix>/bin                         pinpointd, pinpoint
#   <prefix>/libexec/pinpoint            pinpoint-shim and pinpoint-checkpoint (found there by
#                                        pinpointd), the Slurm and
#                                        HTCondor integrations (found there by pinpoint)
#   <prefix>/libexec/pinpoint/slurm      srun and scontrol for jobs (put on their PATH by pinpointd)
#   <prefix>/share/man, bash and zsh completion, <prefix>/share/doc/pinpoint (the docs, copyright)
#   the unit and the configuration file: cmake/install_system_files.cmake
include(GNUInstallDirs)
set(PINPOINT_LIBEXEC ${CMAKE_INSTALL_LIBEXECDIR}/pinpoint)
install(TARGETS pinpointd pinpoint RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS pinpoint-shim pinpoint-cdi-hook pinpoint-checkpoint
        RUNTIME DESTINATION ${PINPOINT_LIBEXEC})
# slurm/ holds srun and scontrol alone: pinpointd puts it first on the PATH of a job that no real
# Slurm runs (docs/cli.md "Slurm's environment and srun").
install(TARGETS pinpoint-srun RUNTIME DESTINATION ${PINPOINT_LIBEXEC}/slurm)
install(PROGRAMS src/srun/scontrol DESTINATION ${PINPOINT_LIBEXEC}/slurm)
install(PROGRAMS integrations/slurm/pinpoint-slurm integrations/htcondor/pinpoint-htcondor
                 integrations/htcondor/pinpoint-htcondor-wrapper DESTINATION ${PINPOINT_LIBEXEC})
install(FILES integrations/common/pinpoint-run.sh DESTINATION ${PINPOINT_LIBEXEC})
install(FILES ${PINPOINT_COMPLETION_DIR}/pinpoint DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
foreach(page ${PINPOINT_MAN_PAGES})
  string(REGEX REPLACE ".*\\.([0-9])\\.gz$" "\\1" section ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
file(GLOB PINPOINT_DOCS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES README.md ${PINPOINT_DOCS} DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The licence: Debian's copyright file (machine-readable, it names the licence of what is compiled in).
install(FILES packaging/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(CODE "set(PINPOINT_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
set(PINPOINT_COMPLETION_DIR \"${PINPOINT_COMPLETION_DIR}\")")
install(SCRIPT cmake/install_system_files.cmake)

# The Debian package: build/packages/pinpoint_<version>_<arch>.deb. Installed under /usr whatever
# the build's prefix; its dependencies come from dpkg-shlibdeps (libcpp-httplib0.11 and the C
# and C++ libraries); maintainer scripts and conffiles from packaging/debian.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pinpoint)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_VERSION ${PINPOINT_DEB_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU slices for the jobs of one node: pinpointd and the pinpoint command")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "pinpoint gives each job exactly the GPU slice it asks for (device memory and a
share of the SMs through NVIDIA MPS, one whole GPU, or several) and packs the
jobs onto the node's GPUs. pinpointd is the daemon that owns the GPUs;
pinpoint is the command line users submit and follow jobs with. Running jobs
survive a restart or an upgrade of pinpointd. Integrations for Slurm and
HTCondor are in /usr/libexec/pinpoint.")
set(CPACK_PACKAGE_CONTACT "pinpoint developers <pinpoint@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# deb-systemd-helper and deb-systemd-invoke, for the maintainer scripts.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "init-system-helpers (>= 1.54~)")
# jq: the Slurm and HTCondor integrations; bash-completion: the completion of `pinpoint`,
# including a job's command after `--`. The NVIDIA driver and MPS come from NVIDIA.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "jq, bash-completion")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/prerm ${PROJECT_SOURCE_DIR}/packaging/debian/postrm
    ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/packages)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/_cpack)
include(CPack)

if(PINPOINT_TESTS AND NOT PINPOINT_SANITIZE)
  # The package built, installed into a scratch root, run, upgraded with a job running and purged
  # (tests/package). Not for the sanitizer build: nobody packages it.
  add_test(NAME package COMMAND bash ${PROJECT_SOURCE_DIR}/tests/package/package_test.sh
           ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${CMAKE_CPACK_COMMAND})
  set_tests_properties(package PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()
