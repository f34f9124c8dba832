# Installation: headers under include/executorch, static libraries,
# executor_runner under bin/, and a CMake package (executorchConfig.cmake + executorchTargets.cmake) that
# find_package(executorch) loads. Included last by the top-level
# CMakeLists.txt, once every target exists.

include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(EXECUTORCH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/executorch)
set(EXECUTORCH_INSTALL_SHAREDIR ${CMAKE_INSTALL_DATADIR}/executorch)

# The runtime core is exported as executorch::executorch, upstream's name.
set_target_properties(executorch_core PROPERTIES EXPORT_NAME executorch)

set(_executorch_installed_targets
    executorch_core
    program_schema
    executorch_codegen_unboxing
    portable_kernels_impl
    portable_kernels
    optimized_kernels
    quantized_kernels_impl
    quantized_kernels
    prim_ops
    extension_data_loader
    extension_evalue_util
    extension_flat_tensor
    extension_kernel_util
    extension_memory_allocator
    extension_module
    extension_runner_util
    extension_tensor
    extension_threadpool
    xnnpack_backend
    xnnpack_schema
    etdump
    bundled_program)
set(_executorch_export_targets)
foreach(_target IN LISTS _executorch_installed_targets)
  if(TARGET ${_target})
    list(APPEND _executorch_export_targets ${_target})
  endif()
endforeach()
install(
  TARGETS ${_executorch_export_targets}
  EXPORT executorchTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(
  EXPORT executorchTargets
  NAMESPACE executorch::
  DESTINATION ${EXECUTORCH_INSTALL_CMAKEDIR})

# The command-line runner, when built.
if(TARGET executor_runner)
  install(TARGETS executor_runner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# Public headers keep their source paths: <executorch/runtime/...>. Tests,
# test helpers and the Python bindings stay out.
foreach(_dir runtime extension kernels backends devtools)
  install(
    DIRECTORY ${CMAKE_SOURCE_DIR}/${_dir}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/executorch
    FILES_MATCHING
    PATTERN "*.h"
    PATTERN "testing" EXCLUDE
    PATTERN "test" EXCLUDE
    PATTERN "pybindings" EXCLUDE
    PATTERN "__pycache__" EXCLUDE)
endforeach()
# Headers generated from the program, ETDump and .ptd schemas.
install(DIRECTORY ${CMAKE_BINARY_DIR}/generated/executorch/schema
                  ${CMAKE_BINARY_DIR}/generated/executorch/devtools
                  ${CMAKE_BINARY_DIR}/generated/executorch/extension
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/executorch)

# Startup registration sources, compiled into the consuming app.
install(FILES ${CMAKE_SOURCE_DIR}/cmake/register_portable_ops.cpp
              ${CMAKE_SOURCE_DIR}/cmake/register_xnnpack_backend.cpp
        DESTINATION ${EXECUTORCH_INSTALL_SHAREDIR})

configure_package_config_file(
  ${CMAKE_SOURCE_DIR}/cmake/executorchConfig.cmake.in
  ${CMAKE_BINARY_DIR}/executorchConfig.cmake
  INSTALL_DESTINATION ${EXECUTORCH_INSTALL_CMAKEDIR}
  PATH_VARS EXECUTORCH_INSTALL_SHAREDIR)
write_basic_package_version_file(
  ${CMAKE_BINARY_DIR}/executorchConfigVersion.cmake
  VERSION 1.0.0
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/executorchConfig.cmake
              ${CMAKE_BINARY_DIR}/executorchConfigVersion.cmake
        DESTINATION ${EXECUTORCH_INSTALL_CMAKEDIR})

# A wheel build (scikit-build-core sets SKBUILD; the install prefix is the
# package directory) also installs the Python extension modules next to their
# wrappers, and the commit it was built from for executorch.version.
if(SKBUILD)
  if(TARGET _portable_lib)
    install(TARGETS _portable_lib LIBRARY DESTINATION extension/pybindings)
  endif()
  if(TARGET _llm_runner)
    install(TARGETS _llm_runner LIBRARY DESTINATION extension/llm/runner)
  endif()
  execute_process(
    COMMAND git rev-parse HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE _executorch_git_commit
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  file(WRITE ${CMAKE_BINARY_DIR}/_build_info.py
       "# Written by the wheel's CMake build.\nGIT_COMMIT = \"${_executorch_git_commit}\"\n")
  install(FILES ${CMAKE_BINARY_DIR}/_build_info.py DESTINATION .)
endif()
