/* Debian 12's wine (8.0) lacks bcryptprimitives.dll, whose ProcessPrng Rust's standard library
 * (1.78 and later) imports on Windows for its random numbers. This stand-in, put into the wine
 * prefix by scripts/windows-check, gives the same bytes through BCryptGenRandom, which wine has.
 * Test rig only: never shipped, never on a real Windows. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x7fffffff ? 0x7fffffff : (ULONG)len;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
