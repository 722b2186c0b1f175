/* Parser and deparser: Ethernet, then IPv4/UDP/BTH (RoCEv2) with INT
 * when its DSCP asks for it, 802.1Qbb PFC frames, or an RCM CN with its
 * list of flows. */
#ifndef P4RCM_PARSER_P4
#define P4RCM_PARSER_P4

parser RcmParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4:   parse_ipv4;
            ETHERTYPE_PFC:    parse_pfc;
            ETHERTYPE_RCM_CN: parse_rcm_cn;
            default:          accept;
        }
    }
    state parse_pfc {
        packet.extract(hdr.pfc);
        transition accept;
    }
    state parse_rcm_cn {
        packet.extract(hdr.rcm_cn);
        meta.cn_left = hdr.rcm_cn.n_flows;
        transition select(meta.cn_left) {
            0:       accept;
            default: parse_rcm_flow;
        }
    }
    /* More than MAX_CN_FLOWS entries overflow the stack: the parser
     * error drops the CN (see p4/README.md). */
    state parse_rcm_flow {
        packet.extract(hdr.rcm_flows.next);
        meta.cn_left = meta.cn_left - 1;
        transition select(meta.cn_left) {
            0:       accept;
            default: parse_rcm_flow;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        /* The DSCP's class selector is the priority, as RoCE NICs and
         * switches map DSCP to priority by default (DSCP 26: 3). */
        meta.pfc_class = hdr.ipv4.dscp[5:3];
        transition select(hdr.ipv4.protocol) {
            IPPROTO_UDP: parse_udp;
            default:     accept;
        }
    }
    state parse_udp {
        packet.extract(hdr.udp);
        transition select(hdr.udp.dst_port) {
            UDP_PORT_ROCEV2: parse_bth;
            default:         accept;
        }
    }
    state parse_bth {
        packet.extract(hdr.bth);
        transition select(hdr.ipv4.dscp[0:0]) {
            1:       parse_int;
            default: accept;
        }
    }
    /* A stack of another version, or of more hops than MAX_INT_HOPS, is
     * malformed; so is one the frame ends inside (PacketTooShort).
     * Ingress drops and counts both (p4/README.md). */
    state parse_int {
        packet.extract(hdr.int_shim);
        meta.int_left = hdr.int_shim.hop_count;
        transition select(hdr.int_shim.version, hdr.int_shim.hop_count) {
            (INT_VERSION, 0): accept;
            (INT_VERSION, 1): parse_int_hop;
            (INT_VERSION, 2): parse_int_hop;
            (INT_VERSION, 3): parse_int_hop;
            (INT_VERSION, 4): parse_int_hop;
            (INT_VERSION, 5): parse_int_hop;
            default:          int_malformed;
        }
    }
    state parse_int_hop {
        packet.extract(hdr.int_hops.next);
        meta.int_left = meta.int_left - 1;
        transition select(meta.int_left) {
            0:       accept;
            default: parse_int_hop;
        }
    }
    state int_malformed {
        meta.int_malformed = true;
        transition accept;
    }
}

control RcmDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.pfc);
        packet.emit(hdr.rcm_cn);
        packet.emit(hdr.rcm_flows);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.udp);
        packet.emit(hdr.bth);
        packet.emit(hdr.int_shim);
        packet.emit(hdr.int_hops);
    }
}

#endif
