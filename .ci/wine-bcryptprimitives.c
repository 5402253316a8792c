/* A stand-in for Windows' bcryptprimitives.dll under Wine 8.0 (Debian's), which lacks it.
 *
 * Rust's std (1.78+) takes its randomness (HashMap keys) from bcryptprimitives!ProcessPrng,
 * imported with raw-dylib, so every Rust .exe fails to load under a Wine without that DLL.
 * This DLL exports ProcessPrng and fills the buffer from advapi32!SystemFunction036
 * (RtlGenRandom), which Wine implements. Built by .ci/cross with mingw-w64; used only for the
 * Wine runs there, never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
