/* Parser and deparser: Ethernet, then IPv4/UDP/BTH (RoCEv2), 802.1Qbb PFC
 * frames, or an RCM CN with its list of flows. */
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
    }
}

#endif
