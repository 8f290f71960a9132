//! The conformance suite over the RON family, for S in {1, 2, 3, 64, 65, 256}.

use ron_core::{NxtRon, Ron, RonInline, RonPark, RonPlock, RonRaw, RonTicket};
use ron_suite::conformance_tests;

conformance_tests!(ron_raw_default, RonRaw, fair);
conformance_tests!(ron_inline_default, RonInline, fair);
conformance_tests!(ron_inline_1, RonInline<1>, fair);
conformance_tests!(ron_inline_2, RonInline<2>, fair);
conformance_tests!(ron_inline_3, RonInline<3>, fair);
conformance_tests!(ron_inline_64, RonInline<64>, fair);
conformance_tests!(ron_inline_65, RonInline<65>, fair);
conformance_tests!(ron_inline_256, RonInline<256>, fair);

conformance_tests!(nxt_ron_1, NxtRon<1>, fair);
conformance_tests!(nxt_ron_2, NxtRon<2>, fair);
conformance_tests!(nxt_ron_3, NxtRon<3>, fair);
conformance_tests!(nxt_ron_64, NxtRon<64>, fair);
conformance_tests!(nxt_ron_65, NxtRon<65>, fair);
conformance_tests!(nxt_ron_256, NxtRon<256>, fair);

conformance_tests!(ron_plock_1, RonPlock<1>, fair);
conformance_tests!(ron_plock_2, RonPlock<2>, fair);
conformance_tests!(ron_plock_3, RonPlock<3>, fair);
conformance_tests!(ron_plock_64, RonPlock<64>, fair);
conformance_tests!(ron_plock_65, RonPlock<65>, fair);
conformance_tests!(ron_plock_256, RonPlock<256>, fair);

conformance_tests!(ron_ticket_1, RonTicket<1>, fair);
conformance_tests!(ron_ticket_2, RonTicket<2>, fair);
conformance_tests!(ron_ticket_3, RonTicket<3>, fair);
conformance_tests!(ron_ticket_64, RonTicket<64>, fair);
conformance_tests!(ron_ticket_65, RonTicket<65>, fair);
conformance_tests!(ron_ticket_256, RonTicket<256>, fair);

conformance_tests!(ron_alg1_1, Ron<1>, fair);
conformance_tests!(ron_alg1_2, Ron<2>, fair);
conformance_tests!(ron_alg1_3, Ron<3>, fair);
conformance_tests!(ron_alg1_64, Ron<64>, fair);
conformance_tests!(ron_alg1_65, Ron<65>, fair);
conformance_tests!(ron_alg1_256, Ron<256>, fair);

conformance_tests!(ron_park_default, RonPark, fair);
conformance_tests!(ron_park_1, RonPark<1>, fair);
conformance_tests!(ron_park_2, RonPark<2>, fair);
conformance_tests!(ron_park_3, RonPark<3>, fair);
conformance_tests!(ron_park_64, RonPark<64>, fair);
