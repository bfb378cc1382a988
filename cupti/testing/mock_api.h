/* SPDX-License-Identifier: MIT */
/* What the mock libcupti (libcupti_mock.c) offers its test driver. */
#ifndef GTRACE_CUPTI_MOCK_API_H
#define GTRACE_CUPTI_MOCK_API_H

struct mock_state {
	int subscribed;		/* the agent holds the subscriber slot now */
	int kinds;		/* activity kinds enabled now */
	int driver_ids;		/* driver API ids enabled now (fine-grained) */
	int order_errors;	/* kinds enabled before the timestamp callback */
	int subscribes;		/* cuptiSubscribe calls */
	int unsubscribes;	/* cuptiUnsubscribe calls */
	int flushes;		/* cuptiActivityFlushAll calls */
	int nvtx_inits;		/* InitializeInjectionNvtx2 calls forwarded to "libcupti" */
};

int mock_emit(int n, unsigned corr);
void mock_complete_async(void);
void mock_state(struct mock_state *s);

#endif
