/*
 * image.c — PNG/JPEG decoding (and PNG writing) for torch.data's image folder, via stb.
 *
 * Why: an image-folder dataset needs a decoder, and Debian's libstb-dev ships the
 * single-header stb_image / stb_image_write; compiling them here keeps the bindings free of
 * image code and adds no runtime dependency.
 *
 * What:
 *   ltimg_decode(bytes, len, want_channels, &w, &h, &c, &pixels) decodes PNG or JPEG bytes
 *     into uint8 pixels, row-major HWC (c = want_channels when > 0, else the file's own),
 *     allocated here and released with ltimg_free(). Returns 0, or -1 with the reason in
 *     ltimg_error() (a per-thread slot: worker threads decode concurrently).
 *   ltimg_write_png(path, w, h, c, pixels) writes HWC uint8 pixels; returns 0 or -1.
 *
 * How (Lua, through the FFI; the declarations are runtime/ltorch_image.h, whose cdef region
 * lua/torch/data/image.lua reads back with ltimg_cdef_source()):
 *     local img = require "torch.data.image"
 *     local x = img.decode(io.open(path, "rb"):read("*a"), {channels = 3}) -- uint8 (H, W, 3)
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_NO_STDIO
#define STBI_THREAD_LOCAL __thread
#include <stb/stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
#pragma GCC diagnostic pop

#include "ltorch_image.h"

static __thread char img_error[128];

const char *ltimg_error(void) { return img_error; }

int ltimg_decode(const unsigned char *bytes, int len, int want_channels, int *w, int *h, int *c,
                 unsigned char **pixels)
{
    int file_channels = 0;
    *pixels = NULL;
    if (want_channels < 0 || want_channels > 4) {
        snprintf(img_error, sizeof img_error, "channels must be 0..4, got %d", want_channels);
        return -1;
    }
    unsigned char *p = stbi_load_from_memory(bytes, len, w, h, &file_channels, want_channels);
    if (p == NULL) {
        const char *why = stbi_failure_reason();
        snprintf(img_error, sizeof img_error, "%s", why != NULL ? why : "unknown reason");
        return -1;
    }
    *c = want_channels > 0 ? want_channels : file_channels;
    *pixels = p;
    return 0;
}

void ltimg_free(unsigned char *pixels) { stbi_image_free(pixels); }

int ltimg_write_png(const char *path, int w, int h, int c, const unsigned char *pixels)
{
    if (!stbi_write_png(path, w, h, c, pixels, w * c)) {
        snprintf(img_error, sizeof img_error, "cannot write %s", path);
        return -1;
    }
    return 0;
}
