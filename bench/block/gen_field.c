/*
 * Writes an S3D-like 3-D float64 field: a smooth background plus local
 * Gaussian features (flame kernels) and a little noise, stored as 64 storage
 * blocks one after another, each row-major inside (ADIOS layout).
 * Prints, for each selectivity, the threshold t with about that fraction of
 * elements >= t (exact in the tail, from a sample otherwise).
 *
 *   gen_field OUT NX NY NZ BX BY BZ [SUBFILE NSUBBLOCKS]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;
static double urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr, "usage: gen_field OUT NX NY NZ BX BY BZ [SUBFILE NSUBBLOCKS]\n");
		return 2;
	}
	long nx = atol(argv[2]), ny = atol(argv[3]), nz = atol(argv[4]);
	long bx = atol(argv[5]), by = atol(argv[6]), bz = atol(argv[7]);
	size_t n = (size_t)nx * ny * nz;
	double *f = malloc(n * sizeof(double));
	double *fx = malloc(nx * sizeof(double)), *fy = malloc(ny * sizeof(double)),
		   *fz = malloc(nz * sizeof(double));
	if (!f || !fx || !fy || !fz) {
		perror("malloc");
		return 1;
	}
	for (long i = 0; i < nx; i++)
		fx[i] = 300 + 40 * sin(i * 2 * M_PI / nx * 1.5) + 10 * sin(i * 0.05);
	for (long j = 0; j < ny; j++)
		fy[j] = 30 * cos(j * 2 * M_PI / ny) + 5 * sin(j * 0.11);
	for (long k = 0; k < nz; k++)
		fz[k] = 20 * sin(k * 2 * M_PI / nz * 2);
	for (long i = 0; i < nx; i++)
		for (long j = 0; j < ny; j++) {
			double *row = f + ((size_t)i * ny + j) * nz;
			double b = fx[i] + fy[j] + 8 * sin((i + j) * 0.02);
			for (long k = 0; k < nz; k++)
				row[k] = b + fz[k] + (urand() - 0.5) * 2.0;
		}
	/* Flame kernels: hot, local, of varied size and strength. */
	int kernels = 60;
	for (int q = 0; q < kernels; q++) {
		double cx = urand() * nx, cy = urand() * ny, cz = urand() * nz;
		double s = 4 + urand() * 16, h = 200 + urand() * 1800;
		long r = (long)(3 * s);
		for (long i = (long)cx - r; i <= (long)cx + r; i++) {
			if (i < 0 || i >= nx)
				continue;
			for (long j = (long)cy - r; j <= (long)cy + r; j++) {
				if (j < 0 || j >= ny)
					continue;
				double d2ij = ((i - cx) * (i - cx) + (j - cy) * (j - cy)) / (s * s);
				if (d2ij > 9)
					continue;
				double *row = f + ((size_t)i * ny + j) * nz;
				for (long k = (long)cz - r; k <= (long)cz + r; k++) {
					if (k < 0 || k >= nz)
						continue;
					double d2 = d2ij + (k - cz) * (k - cz) / (s * s);
					if (d2 < 9)
						row[k] += h * exp(-0.5 * d2);
				}
			}
		}
	}

	/* Thresholds: exact top values from a partial sort of the tail candidates. */
	size_t sample_n = 2000000;
	double *sample = malloc(sample_n * sizeof(double));
	for (size_t s = 0; s < sample_n; s++)
		sample[s] = f[(size_t)(urand() * n) % n];
	qsort(sample, sample_n, sizeof(double), cmp_desc);
	size_t top_k = n / 100 < 300000 ? n / 100 + 1 : 300000;
	size_t ci = (size_t)((double)top_k / n * sample_n * 4);	/* generous */
	double cut = sample[ci < sample_n ? ci : sample_n - 1];
	size_t nt = 0;
	double *top = malloc(sizeof(double) * (top_k * 8 + 16));
	for (size_t e = 0; e < n && nt < top_k * 8; e++)
		if (f[e] >= cut)
			top[nt++] = f[e];
	qsort(top, nt, sizeof(double), cmp_desc);
	const double sels[] = {1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 0.5, 1.0};
	for (size_t s = 0; s < sizeof sels / sizeof sels[0]; s++) {
		size_t k = (size_t)(sels[s] * n);
		double t;
		if (k == 0)
			k = 1;
		if (k <= nt)
			t = top[k - 1];
		else if (sels[s] >= 1.0)
			t = -INFINITY;
		else
			t = sample[(size_t)(sels[s] * sample_n)];
		printf("%g %.17g\n", sels[s], t);
	}

	/* Write in block order. */
	FILE *out = fopen(argv[1], "wb");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	FILE *sub = argc >= 10 ? fopen(argv[8], "wb") : NULL;
	long nsub = argc >= 10 ? atol(argv[9]) : 0;
	double *buf = malloc(sizeof(double) * bz);
	long block = 0;
	for (long gi = 0; gi < nx; gi += bx)
		for (long gj = 0; gj < ny; gj += by)
			for (long gk = 0; gk < nz; gk += bz, block++) {
				long ei = gi + bx > nx ? nx - gi : bx, ej = gj + by > ny ? ny - gj : by,
					 ek = gk + bz > nz ? nz - gk : bz;
				for (long i = 0; i < ei; i++)
					for (long j = 0; j < ej; j++) {
						memcpy(buf, f + ((size_t)(gi + i) * ny + gj + j) * nz + gk, ek * sizeof(double));
						if (fwrite(buf, sizeof(double), ek, out) != (size_t)ek) {
							perror("write");
							return 1;
						}
						if (sub && block < nsub)
							fwrite(buf, sizeof(double), ek, sub);
					}
			}
	if (fclose(out) != 0 || (sub && fclose(sub) != 0)) {
		perror("close");
		return 1;
	}
	return 0;
}
