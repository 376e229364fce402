# DuckDB 1.4.4 (LTS), from one of two places:
# - NX_DUCKDB_DIR (configure time, e.g. -DNX_DUCKDB_DIR=/opt/duckdb): an already installed
#   DuckDB with include/duckdb.h and lib/libduckdb.so; nothing is fetched, and the installed
#   binary finds the library there (its RPATH names that lib/ unless it is a system one).
# - otherwise it is fetched from the npm registry, pinned by version and checksum:
#     libduckdb.so  from @duckdb/node-bindings-linux-x64@1.4.4-r.4
#     duckdb.h      from duckdb@1.4.4 (package/src/duckdb/src/include/duckdb.h)
#   Nothing of it is committed. The unpacked files are cached in NX_DUCKDB_CACHE so that
#   several build trees (plain, sanitizer, bench) share one download; `cmake --install`
#   copies the library beside the binary's private lib directory.
# Sets NX_DUCKDB_LIBDIR (directory of libduckdb.so) and NX_DUCKDB_FETCHED.
set(NX_DUCKDB_VERSION 1.4.4)
set(NX_DUCKDB_DIR "" CACHE PATH
    "an installed DuckDB ${NX_DUCKDB_VERSION} (include/duckdb.h, lib/libduckdb.so); empty: fetch")
set(NX_DUCKDB_CACHE "$ENV{HOME}/.cache/neuron-explorer/duckdb-${NX_DUCKDB_VERSION}"
    CACHE PATH "where the fetched DuckDB library and header are kept")
set(_bind_pkg "@duckdb/node-bindings-linux-x64@1.4.4-r.4")
set(_bind_tgz "duckdb-node-bindings-linux-x64-1.4.4-r.4.tgz")
set(_bind_sha256 "732fac4dc6b8f198870b9c4bb6ddf13544466daca00ad28ba2f1d80de5d7aa4b")
set(_hdr_pkg "duckdb@1.4.4")
set(_hdr_tgz "duckdb-1.4.4.tgz")
set(_hdr_sha256 "5bb967dcbcd517670ba5f169f238fb9d6787e53752c60ebe24386169d76941ed")

function(_nx_fetch_npm pkg tgz sha member dest)
  if(EXISTS ${dest})
    return()
  endif()
  file(MAKE_DIRECTORY ${NX_DUCKDB_CACHE}/dl)
  if(NOT EXISTS ${NX_DUCKDB_CACHE}/dl/${tgz})
    find_program(NPM npm REQUIRED)
    message(STATUS "fetching ${pkg} from the npm registry")
    execute_process(COMMAND ${NPM} pack ${pkg} --silent
                    WORKING_DIRECTORY ${NX_DUCKDB_CACHE}/dl RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "npm pack ${pkg} failed (${rc})")
    endif()
  endif()
  file(SHA256 ${NX_DUCKDB_CACHE}/dl/${tgz} got)
  if(NOT got STREQUAL sha)
    file(REMOVE ${NX_DUCKDB_CACHE}/dl/${tgz})
    message(FATAL_ERROR "${tgz}: checksum ${got} does not match the pinned ${sha}")
  endif()
  file(ARCHIVE_EXTRACT INPUT ${NX_DUCKDB_CACHE}/dl/${tgz} DESTINATION ${NX_DUCKDB_CACHE}/x
       PATTERNS ${member})
  get_filename_component(ddir ${dest} DIRECTORY)
  file(MAKE_DIRECTORY ${ddir})
  file(RENAME ${NX_DUCKDB_CACHE}/x/${member} ${dest})
endfunction()

if(NX_DUCKDB_DIR)
  find_path(NX_DUCKDB_INCLUDE duckdb.h PATHS ${NX_DUCKDB_DIR}/include NO_DEFAULT_PATH)
  find_library(NX_DUCKDB_LIB duckdb PATHS ${NX_DUCKDB_DIR}/lib ${NX_DUCKDB_DIR}/lib64
               NO_DEFAULT_PATH)
  if(NOT NX_DUCKDB_INCLUDE OR NOT NX_DUCKDB_LIB)
    message(FATAL_ERROR "NX_DUCKDB_DIR=${NX_DUCKDB_DIR}: no include/duckdb.h or "
                        "lib/libduckdb.so there")
  endif()
  message(STATUS "DuckDB: ${NX_DUCKDB_LIB} (must be ${NX_DUCKDB_VERSION}; not fetched)")
  add_library(duckdb SHARED IMPORTED GLOBAL)
  set_target_properties(duckdb PROPERTIES
    IMPORTED_LOCATION ${NX_DUCKDB_LIB}
    INTERFACE_INCLUDE_DIRECTORIES ${NX_DUCKDB_INCLUDE})
  get_filename_component(NX_DUCKDB_LIBDIR ${NX_DUCKDB_LIB} DIRECTORY)
  set(NX_DUCKDB_FETCHED OFF)
  return()
endif()

_nx_fetch_npm(${_bind_pkg} ${_bind_tgz} ${_bind_sha256} package/libduckdb.so
              ${NX_DUCKDB_CACHE}/lib/libduckdb.so)
_nx_fetch_npm(${_hdr_pkg} ${_hdr_tgz} ${_hdr_sha256} package/src/duckdb/src/include/duckdb.h
              ${NX_DUCKDB_CACHE}/include/duckdb.h)

add_library(duckdb SHARED IMPORTED GLOBAL)
set_target_properties(duckdb PROPERTIES
  IMPORTED_LOCATION ${NX_DUCKDB_CACHE}/lib/libduckdb.so
  INTERFACE_INCLUDE_DIRECTORIES ${NX_DUCKDB_CACHE}/include)
set(NX_DUCKDB_LIBDIR ${NX_DUCKDB_CACHE}/lib)
set(NX_DUCKDB_FETCHED ON)
