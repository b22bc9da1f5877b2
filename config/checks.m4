dnl Dependency checks for dlsched; each result is reported by DLSCHED_SUMMARY.

dnl ---- Core libraries (required) -------------------------------------------
PKG_CHECK_MODULES([JANSSON], [jansson >= 2.10], [],
  [AC_MSG_ERROR([jansson not found: install libjansson-dev (Debian) or set JANSSON_CFLAGS/JANSSON_LIBS])])
PKG_CHECK_MODULES([SQLITE], [sqlite3 >= 3.31], [],
  [AC_MSG_ERROR([SQLite 3 not found: install libsqlite3-dev (Debian) or set SQLITE_CFLAGS/SQLITE_LIBS])])

dnl ---- Optional libraries ---------------------------------------------------
PKG_CHECK_MODULES([CHECK], [check >= 0.10], [have_check=yes],
  [have_check=no; AC_MSG_WARN([Check not found (libcheck / check package): unit tests will not be built])])
AM_CONDITIONAL([HAVE_CHECK], [test "x$have_check" = xyes])

PKG_CHECK_MODULES([CURL], [libcurl], [have_curl=yes],
  [have_curl=no; AC_MSG_WARN([libcurl not found: install libcurl4-openssl-dev; the SPANK collector will not be built])])
AM_CONDITIONAL([HAVE_CURL], [test "x$have_curl" = xyes])

dnl dlsched-ingestd (the profile DB's single writer) needs an HTTP server library and munge.
PKG_CHECK_MODULES([MHD], [libmicrohttpd >= 0.9.71], [have_mhd=yes],
  [have_mhd=no; AC_MSG_WARN([libmicrohttpd >= 0.9.71 not found: install libmicrohttpd-dev; dlsched-ingestd will not be built])])
MUNGE_LIBS=""
AC_CHECK_HEADER([munge.h],
  [AC_CHECK_LIB([munge], [munge_decode], [have_munge=yes; MUNGE_LIBS="-lmunge"], [have_munge=no])],
  [have_munge=no])
if test "x$have_munge" = xno; then
  AC_MSG_WARN([munge.h or -lmunge not found: install libmunge-dev; dlsched-ingestd will not be built])
fi
AC_SUBST([MUNGE_LIBS])
have_ingestd=no
ingestd_note=" (needs libmicrohttpd and munge)"
if test "x$have_mhd" = xyes && test "x$have_munge" = xyes; then have_ingestd=yes; ingestd_note=""; fi
AM_CONDITIONAL([HAVE_INGESTD], [test "x$have_ingestd" = xyes])

dnl spank/dlsched's collector, dlsched-collect, sends with libcurl and signs with munge.
have_collector=no
collector_note=" (needs libcurl and munge)"
if test "x$have_curl" = xyes && test "x$have_munge" = xyes; then have_collector=yes; collector_note=""; fi
AM_CONDITIONAL([HAVE_COLLECTOR], [test "x$have_collector" = xyes])

dnl ---- Slurm public headers and libslurm ------------------------------------
AC_ARG_WITH([slurm],
  [AS_HELP_STRING([--with-slurm=PREFIX], [Slurm installation prefix (default: /usr)])],
  [slurm_prefix="$withval"], [slurm_prefix=/usr])
SLURM_CPPFLAGS=""
SLURM_LDFLAGS=""
if test "x$slurm_prefix" != x/usr; then
  SLURM_CPPFLAGS="-I$slurm_prefix/include"
  SLURM_LDFLAGS="-L$slurm_prefix/lib"
fi
save_CPPFLAGS="$CPPFLAGS"; save_LDFLAGS="$LDFLAGS"; save_LIBS="$LIBS"
CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"; LDFLAGS="$LDFLAGS $SLURM_LDFLAGS"
AC_LANG_PUSH([C])
AC_CHECK_HEADERS([slurm/slurm.h slurm/spank.h], [have_slurm_h=yes], [have_slurm_h=no])
AC_CHECK_LIB([slurm], [slurm_api_version], [have_libslurm=yes], [have_libslurm=no])
slurm_version=unknown
if test "x$have_slurm_h" = xyes; then
  AC_COMPUTE_INT([slurm_version_number], [SLURM_VERSION_NUMBER], [#include <slurm/slurm_version.h>], [slurm_version_number=0])
  slurm_version="$(( slurm_version_number >> 16 )).$(( (slurm_version_number >> 8) & 255 )).$(( slurm_version_number & 255 ))"
fi
AC_LANG_POP([C])
CPPFLAGS="$save_CPPFLAGS"; LDFLAGS="$save_LDFLAGS"; LIBS="$save_LIBS"
AC_SUBST([SLURM_CPPFLAGS])
AC_SUBST([SLURM_LDFLAGS])
AM_CONDITIONAL([HAVE_SLURM], [test "x$have_slurm_h" = xyes && test "x$have_libslurm" = xyes])
if test "x$have_ingestd" = xyes; then
  if test "x$have_slurm_h" = xyes && test "x$have_libslurm" = xyes; then
    ingestd_note=" (owner lookup: slurmctld or db-only)"
  else
    ingestd_note=" (owner lookup: db-only; libslurm-dev adds slurmctld's)"
  fi
fi

dnl ---- Configured Slurm source tree (controller plugins) --------------------
AC_ARG_WITH([slurm-source],
  [AS_HELP_STRING([--with-slurm-source=DIR], [configured Slurm source tree; needed for controller plugins (see scripts/get-slurm-source)])],
  [slurm_src="$withval"], [slurm_src=""])
AC_ARG_WITH([slurm-build],
  [AS_HELP_STRING([--with-slurm-build=DIR], [build directory where Slurm's configure ran (default: the source tree)])],
  [slurm_build="$withval"], [slurm_build="$slurm_src"])
AC_ARG_WITH([slurm-plugindir],
  [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where to install plugins (default: the directory of the installed Slurm's plugins, e.g. /usr/lib/x86_64-linux-gnu/slurm-wlm on Debian; else LIBDIR/slurm-wlm)])],
  [slurm_plugindir="$withval"], [slurm_plugindir=""])
if test -z "$slurm_plugindir"; then
  dnl Where slurmctld looks by default: next to Slurm's own plugins (Debian: /usr/lib/<multiarch>/slurm-wlm).
  slurm_multiarch=`$CC -print-multiarch 2>/dev/null`
  for d in ${slurm_multiarch:+/usr/lib/$slurm_multiarch/slurm-wlm} /usr/lib64/slurm /usr/lib/slurm; do
    if test -f "$d/select_cons_tres.so"; then slurm_plugindir="$d"; break; fi
  done
  test -n "$slurm_plugindir" || slurm_plugindir='${libdir}/slurm-wlm'
fi
AC_SUBST([slurm_plugindir])
have_slurm_src=no
slurm_src_note="not given (--with-slurm-source=DIR; scripts/get-slurm-source prepares one): controller plugins are not built"
if test -n "$slurm_src"; then
  if test ! -f "$slurm_src/src/slurmctld/slurmctld.h"; then
    AC_MSG_ERROR([--with-slurm-source=$slurm_src: src/slurmctld/slurmctld.h not found; run scripts/get-slurm-source])
  fi
  if test ! -f "$slurm_build/config.h" || test ! -f "$slurm_build/slurm/slurm_version.h"; then
    AC_MSG_ERROR([--with-slurm-build=$slurm_build: config.h or slurm/slurm_version.h missing; run Slurm's ./configure there (scripts/get-slurm-source does)])
  fi
  dnl The release the tree is of decides which of Slurm's interfaces the plugins are built for
  dnl (plugins/common/dlsched_compat.h): DLS_SLURM_RELEASE = major * 100 + minor.
  AC_MSG_CHECKING([for the Slurm release of $slurm_src])
  slurm_src_number=`sed -n 's/^#define SLURM_VERSION_NUMBER 0x\(@<:@0-9a-fA-F@:>@*\).*/\1/p' "$slurm_build/slurm/slurm_version.h"`
  if test -z "$slurm_src_number"; then
    AC_MSG_RESULT([unknown])
    AC_MSG_ERROR([--with-slurm-build=$slurm_build: slurm/slurm_version.h has no SLURM_VERSION_NUMBER; run Slurm's ./configure there again (scripts/get-slurm-source does)])
  fi
  slurm_src_major=$(( 0x$slurm_src_number >> 16 ))
  slurm_src_minor=$(( (0x$slurm_src_number >> 8) & 255 ))
  slurm_src_micro=$(( 0x$slurm_src_number & 255 ))
  slurm_src_release=`printf '%d.%02d' $slurm_src_major $slurm_src_minor`
  AC_MSG_RESULT([$slurm_src_release.$slurm_src_micro])
  case "$slurm_src_release" in
  22.05|24.11|26.05) ;;
  *) AC_MSG_ERROR([--with-slurm-source=$slurm_src is Slurm $slurm_src_release.$slurm_src_micro; dlsched's plugins support Slurm 22.05, 24.11 and 26.05: point --with-slurm-source at one of those (scripts/get-slurm-source --release 22.05|24.11|26.05), or configure without --with-slurm-source to build without the controller plugins]) ;;
  esac
  slurm_src_release_num=`printf '%d%02d' $slurm_src_major $slurm_src_minor`
  have_slurm_src=yes
  slurm_src_note="$slurm_src (Slurm $slurm_src_release.$slurm_src_micro; build: $slurm_build)"
fi
SLURM_SRC_CPPFLAGS="-DHAVE_CONFIG_H -I$slurm_build -I$slurm_build/slurm -I$slurm_src -I$slurm_src/src/common"
test "x$have_slurm_src" = xno || SLURM_SRC_CPPFLAGS="$SLURM_SRC_CPPFLAGS -DDLS_SLURM_RELEASE=$slurm_src_release_num"
AC_SUBST([SLURM_SRC_CPPFLAGS])
dnl spank/dlsched: the public headers of the release the plugins are built for when a source tree is
dnl given (its slurm/ directory and the generated slurm_version.h), else the installed ones.
SLURM_SPANK_CPPFLAGS="$SLURM_CPPFLAGS"
test "x$have_slurm_src" = xno || SLURM_SPANK_CPPFLAGS="-I$slurm_build -I$slurm_src"
AC_SUBST([SLURM_SPANK_CPPFLAGS])
AM_CONDITIONAL([HAVE_SLURM_SRC], [test "x$have_slurm_src" = xyes])

dnl ---- libtorch ------------------------------------------------------------
AC_ARG_WITH([torch],
  [AS_HELP_STRING([--with-torch=DIR], [libtorch prefix (default: Debian's, /usr); --without-torch disables learned policies])],
  [torch_prefix="$withval"], [torch_prefix=/usr])
have_torch=no
TORCH_CPPFLAGS=""; TORCH_LIBS=""
if test "x$torch_prefix" != xno; then
  for d in "$torch_prefix/include" "$torch_prefix/include/torch/csrc/api/include"; do
    test -d "$d" && TORCH_CPPFLAGS="$TORCH_CPPFLAGS -I$d"
  done
  if test -f "$torch_prefix/share/cmake/Torch/TorchConfig.cmake" || test -f "$torch_prefix/lib/cmake/Torch/TorchConfig.cmake" || ls $torch_prefix/lib/*/cmake/Torch/TorchConfig.cmake >/dev/null 2>&1; then
    torch_cmake=found
  else
    torch_cmake=absent
  fi
  TORCH_LIBS="-L$torch_prefix/lib -ltorch -ltorch_cpu -lc10"
  save_CPPFLAGS="$CPPFLAGS"; save_LIBS="$LIBS"
  CPPFLAGS="$CPPFLAGS $TORCH_CPPFLAGS"; LIBS="$LIBS $TORCH_LIBS"
  AC_MSG_CHECKING([for libtorch (torch/torch.h, -ltorch)])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <torch/torch.h>]], [[auto t = torch::zeros({2}); return (int)t.size(0) - 2;]])],
    [have_torch=yes], [have_torch=no])
  AC_MSG_RESULT([$have_torch])
  CPPFLAGS="$save_CPPFLAGS"; LIBS="$save_LIBS"
  if test "x$have_torch" = xno; then
    AC_MSG_WARN([libtorch not usable (install libtorch-dev): learned policies will not be built])
  fi
fi
AC_SUBST([TORCH_CPPFLAGS])
AC_SUBST([TORCH_LIBS])
AM_CONDITIONAL([HAVE_TORCH], [test "x$have_torch" = xyes])

dnl ---- Sanitizers ------------------------------------------------------------
AC_ARG_ENABLE([sanitizers],
  [AS_HELP_STRING([--enable-sanitizers], [build core, tools and unit tests with ASan+UBSan (plugins are never sanitized)])],
  [enable_san="$enableval"], [enable_san=no])
SANITIZE_FLAGS=""
if test "x$enable_san" = xyes; then
  SANITIZE_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
fi
AC_SUBST([SANITIZE_FLAGS])
AM_CONDITIONAL([SANITIZE], [test "x$enable_san" = xyes])

WARN_CXXFLAGS="-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor"
WARN_CFLAGS="-Wall -Wextra"
dnl CI builds with --enable-werror (scripts/build: WERROR=1): warnings stay at zero.
AC_ARG_ENABLE([werror],
  [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI does)])],
  [enable_werror="$enableval"], [enable_werror=no])
if test "x$enable_werror" = xyes; then
  WARN_CXXFLAGS="$WARN_CXXFLAGS -Werror"
  WARN_CFLAGS="$WARN_CFLAGS -Werror"
fi
AC_SUBST([WARN_CXXFLAGS])
AC_SUBST([WARN_CFLAGS])

AC_DEFUN([DLSCHED_SUMMARY], [
cat <<SUMMARY

dlsched $PACKAGE_VERSION configuration summary
  C++ compiler ........... $CXX (C++17)
  jansson ................ yes
  SQLite ................. yes
  libcurl ................ $have_curl
  libmicrohttpd .......... $have_mhd
  munge .................. $have_munge
  dlsched-ingestd ........ $have_ingestd$ingestd_note
  dlsched-collect ........ $have_collector$collector_note
  Check (unit tests) ..... $have_check
  Slurm headers .......... $have_slurm_h (slurm/slurm.h, version $slurm_version)
  libslurm ............... $have_libslurm
  Slurm source tree ...... $slurm_src_note
  Slurm plugin dir ....... $slurm_plugindir
  libtorch ............... $have_torch (prefix $torch_prefix)
  sanitizers ............. $enable_san
  warnings as errors ..... $enable_werror

SUMMARY
])
