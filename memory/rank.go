package memory

// jarvis_rank is FTS5's BM25 (same k1, b and idf as its built-in bm25())
// without the one costly step: bm25() reads every matching row's token count
// from the index's docsize table, a B-tree lookup per row that is most of a
// search's time (measured on 10,000 notes: 193 µs of ranking at the median
// with it, 28 µs without). Here the count comes with the row: a chunk's id
// carries it in its low 8 bits (lengthCode, set when the chunk is indexed).
// And a one-word query skips the idf scan, a constant factor that cannot
// change the order.
//
// The function is registered on every SQLite connection the process opens
// (sqlite3_auto_extension), through FTS5's documented extension API.
// mattn/go-sqlite3 compiles SQLite into the binary with its symbols
// visible, which is what the declarations below link to.

/*
#cgo !windows LDFLAGS: -lm
#include <math.h>
#include <string.h>

typedef long long i64;
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef struct sqlite3_context sqlite3_context;
typedef struct sqlite3_value sqlite3_value;
typedef struct Fts5Context Fts5Context;
typedef struct Fts5ExtensionApi Fts5ExtensionApi;

// The members of FTS5's public Fts5ExtensionApi, in their order, up to the
// last one used here (fts5.h, SQLite 3.x; iVersion >= 2 has them all).
struct Fts5ExtensionApi {
	int iVersion;
	void *(*xUserData)(Fts5Context*);
	int (*xColumnCount)(Fts5Context*);
	int (*xRowCount)(Fts5Context*, i64 *pnRow);
	int (*xColumnTotalSize)(Fts5Context*, int iCol, i64 *pnToken);
	void *xTokenize;
	int (*xPhraseCount)(Fts5Context*);
	int (*xPhraseSize)(Fts5Context*, int iPhrase);
	int (*xInstCount)(Fts5Context*, int *pnInst);
	int (*xInst)(Fts5Context*, int iIdx, int *piPhrase, int *piCol, int *piOff);
	i64 (*xRowid)(Fts5Context*);
	void *xColumnText;
	void *xColumnSize;
	int (*xQueryPhrase)(Fts5Context*, int iPhrase, void *pUserData, int (*)(const Fts5ExtensionApi*, Fts5Context*, void*));
	int (*xSetAuxdata)(Fts5Context*, void *pAux, void (*xDelete)(void*));
	void *(*xGetAuxdata)(Fts5Context*, int bClear);
};

typedef void (*fts5_extension_function)(const Fts5ExtensionApi*, Fts5Context*, sqlite3_context*, int, sqlite3_value**);

typedef struct fts5_api fts5_api;
struct fts5_api {
	int iVersion;
	void *xCreateTokenizer;
	void *xFindTokenizer;
	int (*xCreateFunction)(fts5_api*, const char *zName, void *pUserData, fts5_extension_function xFunction, void (*xDestroy)(void*));
};

int sqlite3_prepare_v2(sqlite3*, const char*, int, sqlite3_stmt**, const char**);
int sqlite3_bind_pointer(sqlite3_stmt*, int, void*, const char*, void (*)(void*));
int sqlite3_step(sqlite3_stmt*);
int sqlite3_finalize(sqlite3_stmt*);
void sqlite3_result_double(sqlite3_context*, double);
void sqlite3_result_error_code(sqlite3_context*, int);
void *sqlite3_malloc64(unsigned long long);
void sqlite3_free(void*);
int sqlite3_auto_extension(void (*)(void));
int sqlite3_compileoption_used(const char*);

typedef struct {
	int nPhrase;
	int nGroup;   // distinct groups >= 0 (0: no coverage factor)
	double cover; // coverage weight
	double avgdl;
	double *idf;  // per phrase
	double *freq; // per phrase, for the current row
	double *w;    // per phrase weight
	int *g;       // per phrase group, -1 for none
	int *seen;    // per group, for the current row
} jrank_data;

double sqlite3_value_double(sqlite3_value*);
int sqlite3_value_int(sqlite3_value*);

static int jrank_count(const Fts5ExtensionApi *api, Fts5Context *fts, void *p) {
	(*(i64 *)p)++;
	return 0;
}

// The inverse of lengthCode in rank.go.
static double jrank_length(i64 rowid) {
	int c = (int)(rowid & 0xff);
	return c < 128 ? (double)c : 128.0 + (c - 128) * 16.0 + 8.0;
}

static void jrank(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nVal, sqlite3_value **apVal) {
	const double k1 = 1.2, b = 0.75;
	jrank_data *d = (jrank_data *)api->xGetAuxdata(fts, 0);
	int rc = 0;
	if (d == 0) {
		int n = api->xPhraseCount(fts);
		d = (jrank_data *)sqlite3_malloc64(sizeof(jrank_data) + 3 * (unsigned long long)n * sizeof(double) + 2 * (unsigned long long)n * sizeof(int));
		if (d == 0) {
			sqlite3_result_error_code(ctx, 7); // SQLITE_NOMEM
			return;
		}
		d->nPhrase = n;
		d->idf = (double *)&d[1];
		d->freq = d->idf + n;
		d->w = d->freq + n;
		d->g = (int *)(d->w + n);
		d->seen = d->g + n;
		d->nGroup = 0;
		d->cover = 0.0;
		for (int i = 0; i < n; i++) {
			d->w[i] = 1.0;
			d->g[i] = -1;
		}
		// jarvis_rank(fts, cover, w0, g0, w1, g1, ...): a weight and a group
		// per phrase, in query order (search.go).
		if (nVal == 1 + 2 * n) {
			d->cover = sqlite3_value_double(apVal[0]);
			for (int i = 0; i < n; i++) {
				d->w[i] = sqlite3_value_double(apVal[1 + 2 * i]);
				d->g[i] = sqlite3_value_int(apVal[2 + 2 * i]);
				if (d->g[i] >= n) d->g[i] = -1;
				if (d->g[i] + 1 > d->nGroup) d->nGroup = d->g[i] + 1;
			}
		}
		i64 nRow = 0, nTok = 0;
		rc = api->xRowCount(fts, &nRow);
		if (rc == 0) rc = api->xColumnTotalSize(fts, -1, &nTok);
		d->avgdl = (nRow > 0 && nTok > 0) ? (double)nTok / (double)nRow : 1.0;
		for (int i = 0; rc == 0 && i < n; i++) {
			if (n == 1) {
				d->idf[i] = 1.0;
				break;
			}
			i64 hits = 0;
			rc = api->xQueryPhrase(fts, i, &hits, jrank_count);
			double idf = log(((double)nRow - (double)hits + 0.5) / ((double)hits + 0.5));
			d->idf[i] = idf <= 0.0 ? 1e-6 : idf;
		}
		if (rc == 0) rc = api->xSetAuxdata(fts, d, sqlite3_free);
		else sqlite3_free(d);
		if (rc != 0) {
			sqlite3_result_error_code(ctx, rc);
			return;
		}
	}
	memset(d->freq, 0, sizeof(double) * d->nPhrase);
	int nInst = 0;
	rc = api->xInstCount(fts, &nInst);
	for (int i = 0; rc == 0 && i < nInst; i++) {
		int ip, ic, io;
		rc = api->xInst(fts, i, &ip, &ic, &io);
		if (rc == 0 && ip >= 0 && ip < d->nPhrase) d->freq[ip] += 1.0;
	}
	if (rc != 0) {
		sqlite3_result_error_code(ctx, rc);
		return;
	}
	double len = jrank_length(api->xRowid(fts)), score = 0.0;
	if (d->nGroup > 0) memset(d->seen, 0, sizeof(int) * d->nGroup);
	int covered = 0;
	for (int i = 0; i < d->nPhrase; i++) {
		double f = d->freq[i];
		score += d->w[i] * d->idf[i] * (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * len / d->avgdl));
		if (f > 0.0 && d->g[i] >= 0 && !d->seen[d->g[i]]) {
			d->seen[d->g[i]] = 1;
			covered++;
		}
	}
	// More of the query's words (any of each word's forms) beats more
	// occurrences of a few of them.
	if (d->nGroup > 0) score *= 1.0 + d->cover * (double)covered / (double)d->nGroup;
	sqlite3_result_double(ctx, -score); // like bm25(): lower is better
}

// Registers jarvis_rank on a new connection; a connection without FTS5 (or
// where this fails) simply lacks the function.
static int jrank_init(sqlite3 *db, char **pzErrMsg, const void *pApi) {
	fts5_api *api = 0;
	sqlite3_stmt *st = 0;
	// Without FTS5 the query below would fail and leave its error on the
	// connection, which would then fail to open.
	if (!sqlite3_compileoption_used("ENABLE_FTS5")) return 0;
	if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, 0) != 0) return 0;
	if (sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", 0) == 0) sqlite3_step(st);
	sqlite3_finalize(st);
	if (api != 0 && api->iVersion >= 2) api->xCreateFunction(api, "jarvis_rank", 0, jrank, 0);
	return 0;
}

static int jrank_register(void) {
	return sqlite3_auto_extension((void (*)(void))jrank_init);
}
*/
import "C"

import (
	"fmt"
	"unicode"
)

func init() {
	if rc := C.jrank_register(); rc != 0 {
		panic(fmt.Sprintf("memory: registering jarvis_rank with SQLite failed (code %d)", rc))
	}
}

// lengthCode is a chunk's token count in 8 bits: exact below 128, then in
// steps of 16 up to 2,160 (chunks hold at most maxChunkBytes).
func lengthCode(tokens int) int64 {
	if tokens < 128 {
		return int64(tokens)
	}
	return int64(min(255, 128+(tokens-128)/16))
}

// tokenCount counts the tokens FTS5's unicode61 tokenizer makes of s: runs
// of letters, digits and private-use characters.
func tokenCount(s string) int {
	n, in := 0, false
	for _, r := range s {
		tok := unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
		if tok && !in {
			n++
		}
		in = tok
	}
	return n
}
