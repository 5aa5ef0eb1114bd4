/*
 * ltorch_image.h — the image ABI (`ltimg_*`, runtime/image.c): PNG/JPEG decoding and PNG writing
 * for torch.data.image; the one declaration of it, included by image.c and handed to the Lua
 * side's ffi.cdef.
 *
 * What: ltimg_decode() decodes PNG or JPEG bytes into uint8 pixels, row-major HWC (c =
 * want_channels when > 0, else the file's own), allocated by the runtime and released with
 * ltimg_free(); it returns 0, or -1 with the reason in ltimg_error() (a per-thread slot: worker
 * threads decode concurrently). ltimg_write_png() writes HWC uint8 pixels; returns 0 or -1.
 *
 * How: the text between the LTIMG_CDEF markers is embedded at build time
 * (cmake/embed_cdef.cmake -> <build>/gen/ltimg_cdef_gen.c) and returned by ltimg_cdef_source();
 * lua/torch/data/image.lua hands it to ffi.cdef. Keep the region free of preprocessor lines.
 */
#ifndef LTORCH_IMAGE_H
#define LTORCH_IMAGE_H

#ifdef __cplusplus
extern "C" {
#endif

/* LTIMG_CDEF_BEGIN */
const char *ltimg_cdef_source(void);   /* this header's LTIMG_CDEF region, for ffi.cdef */
const char *ltimg_error(void);
int ltimg_decode(const unsigned char *bytes, int len, int want_channels, int *w, int *h, int *c,
                 unsigned char **pixels);
void ltimg_free(unsigned char *pixels);
int ltimg_write_png(const char *path, int w, int h, int c, const unsigned char *pixels);
/* LTIMG_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif
